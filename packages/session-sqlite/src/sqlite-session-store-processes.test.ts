import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRuntime, defineAgent, defineTool } from '@ghost/core';
import { SessionBusyError, SessionStoreError, type SessionStoreV1 } from '@ghost/core/session-store';
import { ScriptedModel } from '@ghost/core/testing';
import Type from 'typebox';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sqliteSchemaVersion } from './sqlite-schema.js';
import { sqliteSessionStore } from './sqlite-session-store.js';
import { requireBuiltPackages, startNodeScript, stopNodeScripts } from './test-support/node-script.js';
import { rawDatabase } from './test-support/raw-database.js';

// Real processes share one file here, each through the built packages as an application imports them.
let directory = '';
const stores: SessionStoreV1[] = [];

beforeAll(() => requireBuiltPackages());
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'ghost-sqlite-processes-'));
});
afterEach(async () => {
  await stopNodeScripts();
  for (const store of stores.splice(0)) await store.close();
  await rm(directory, { recursive: true, force: true });
});

function storeAt(path: string, options: { busyTimeoutMs?: number; leaseMs?: number } = {}): SessionStoreV1 {
  const store = sqliteSessionStore({ path, ...options });
  stores.push(store);
  return store;
}

function message(text: string): string {
  return JSON.stringify({ content: text, role: 'user' });
}

function write(operationId: string, text: string) {
  const messages = [message(text)];
  return { operationId, digest: createHash('sha256').update(text).digest('hex'), messages };
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error,
  );
}

async function historyOf(path: string, id: string, actor: string) {
  const store = storeAt(path);
  const session = await store.open({ id, actor, lockTimeoutMs: 5_000 });
  try {
    return await session.history({ limit: 10_000 });
  } finally {
    await session.release();
  }
}

describe('starting', () => {
  it('lets four processes start on one new file at once: it is migrated once and each writes', async () => {
    const path = join(directory, 'fresh.db');
    const starters = Array.from({ length: 4 }, (_, index) =>
      startNodeScript('open-store.mjs', [path, `s${index}`]),
    );
    await Promise.all(starters.map((starter) => starter.waitForLine((line) => line === 'ready')));
    for (const starter of starters) starter.send('go');
    const ends = await Promise.all(starters.map((starter) => starter.exited));
    for (const [index, end] of ends.entries())
      expect(end, starters[index]?.stderr()).toEqual({ code: 0, signal: null });
    const raw = rawDatabase(path);
    try {
      expect((await raw.execute('SELECT version FROM ghost_schema')).rows.map((row) => row.version)).toEqual([
        sqliteSchemaVersion,
      ]);
    } finally {
      raw.close();
    }
    const listed = await storeAt(path).list({ actor: 'starter' });
    expect(listed.sessions.map((summary) => summary.id).sort()).toEqual(['s0', 's1', 's2', 's3']);
  });
  it('starts on a new file another program is writing to, once that program is done', async () => {
    const path = join(directory, 'contended.db');
    const holder = startNodeScript('hold-write-lock.mjs', [path, '500']);
    await holder.waitForLine((line) => line === 'locked');
    // The file is not in WAL mode yet, and switching it fails at once with SQLITE_BUSY (no busy
    // wait) while the other program writes: the store tries again until it can.
    const session = await storeAt(path).open({ id: 'chat', actor: 'ada', lockTimeoutMs: 1_000 });
    expect(session.isNew).toBe(true);
    await session.release();
    expect(await holder.exited).toEqual({ code: 0, signal: null });
  });
});

describe('another process writing to the file', () => {
  it('waits for a write transaction another process holds (the busy timeout), then writes', async () => {
    const path = join(directory, 'busy.db');
    const store = storeAt(path, { busyTimeoutMs: 20_000 });
    const session = await store.open({ id: 'chat', actor: 'ada', lockTimeoutMs: 1_000 });
    const holder = startNodeScript('hold-write-lock.mjs', [path, '1000']);
    await holder.waitForLine((line) => line === 'locked');
    // The write's BEGIN IMMEDIATE meets the held lock and waits in SQLite (blocking this thread)
    // until the holder rolls back a second later; with no busy timeout it fails at once.
    expect((await session.write(write('after-wait', 'written after the wait'))).status).toBe('applied');
    expect(await holder.exited).toEqual({ code: 0, signal: null });
    expect(holder.lines).toContain('released');
    await session.release();
  });

  it('fails a write held up past busyTimeoutMs with a SessionStoreError, and the next write on the same store works (libsql-client-ts#352)', async () => {
    const path = join(directory, 'poisoned.db');
    const store = storeAt(path, { busyTimeoutMs: 50 });
    const session = await store.open({ id: 'chat', actor: 'ada', lockTimeoutMs: 1_000 });
    const holder = startNodeScript('hold-write-lock.mjs', [path, '600000']);
    await holder.waitForLine((line) => line === 'locked');
    const error = await failure(session.write(write('blocked', 'never written')));
    expect(SessionStoreError.isInstance(error)).toBe(true);
    expect((error as SessionStoreError).reason).toBe('unavailable');
    expect((error as Error).message).toContain('busyTimeoutMs');
    holder.send('release');
    expect(await holder.exited).toEqual({ code: 0, signal: null });
    // On the connection the failed statement left in progress, this COMMIT would fail ("SQL statements in progress").
    expect((await session.write(write('after', 'written once the file was free'))).status).toBe('applied');
    expect((await session.history({ limit: 10 })).map((record) => record.message)).toEqual([
      message('written once the file was free'),
    ]);
    await session.release();
  });
});

describe('a holder in another process', () => {
  it('takes over at once from a holder on this machine killed with SIGKILL, long before its lease ends', async () => {
    const path = join(directory, 'crashed.db');
    const holder = startNodeScript('hold-session.mjs', [path, 'chat', '600000']);
    await holder.waitForLine((line) => line === 'held');
    holder.child.kill('SIGKILL');
    await holder.exited;
    // Its lease had ten minutes to run; its process is gone, so the lease is over now.
    const session = await storeAt(path).open({ id: 'chat', actor: 'holder', lockTimeoutMs: 5_000 });
    expect(session.isNew).toBe(true);
    await session.release();
  });

  it('keeps a live holder’s session for several lease lengths while it renews', async () => {
    const path = join(directory, 'renewed.db');
    const holder = startNodeScript('hold-session.mjs', [path, 'chat', '1500']);
    await holder.waitForLine((line) => line === 'held');
    const error = await failure(storeAt(path).open({ id: 'chat', actor: 'holder', lockTimeoutMs: 4_500 }));
    expect(SessionBusyError.isInstance(error)).toBe(true);
    expect((error as SessionBusyError).reason).toBe('timeout');
    holder.send('release');
    expect(await holder.exited).toEqual({ code: 0, signal: null });
  });

  it('takes over from a stalled holder once its lease expires, and fences the holder’s late write', async () => {
    const path = join(directory, 'stalled.db');
    const holder = startNodeScript('hold-session.mjs', [path, 'chat', '300']);
    await holder.waitForLine((line) => line === 'held');
    // Alive (its pid answers) but renewing nothing for 4 s; then it tries to write.
    holder.send('stall 4000');
    holder.send('write from the stalled holder');
    const store = storeAt(path);
    const session = await store.open({ id: 'chat', actor: 'holder', lockTimeoutMs: 3_000 });
    await session.write(write('mine', 'from the new holder'));
    await session.release();
    const said = JSON.parse(await holder.waitForLine((line) => line.startsWith('{')));
    expect(said).toEqual({ code: 'SESSION_BUSY', reason: 'lock-lost' });
    expect((await historyOf(path, 'chat', 'holder')).map((record) => record.message)).toEqual([
      message('from the new holder'),
    ]);
  });
});

describe('runs in real processes', () => {
  type Said = { run: number; outcome: string; seen: number; error?: string };
  const said = (lines: readonly string[]): Said[] => lines.map((line) => JSON.parse(line) as Said);

  it('keeps the whole earlier history and no half turn when a process is killed in the middle of a run, and the next run works', async () => {
    const path = join(directory, 'killed.db');
    const before = startNodeScript('agent-turns.mjs', [path, 'chat', 'ada', '2', 'before']);
    expect((await before.exited).code, before.stderr()).toBe(0);
    const killed = startNodeScript('killed-mid-run.mjs', [path, 'chat', 'ada']);
    await killed.waitForLine((line) => line === 'in-tool');
    killed.child.kill('SIGKILL');
    expect((await killed.exited).signal).toBe('SIGKILL');
    // The killed run's lease had 30 s left; the next run takes the session over at once.
    const after = startNodeScript('agent-turns.mjs', [path, 'chat', 'ada', '1', 'after']);
    expect((await after.exited).code, after.stderr()).toBe(0);
    // The model saw both earlier turns (4 messages each) before the new question.
    expect(said(after.lines)).toEqual([{ run: 0, outcome: 'completed', seen: 9 }]);
    const history = await historyOf(path, 'chat', 'ada');
    const texts = history.map((record) => record.message);
    expect(texts.some((text) => text.includes('the question that never ends'))).toBe(false);
    expect(history).toHaveLength(12);
    expect(new Set(history.map((record) => record.operationId)).size).toBe(3);
    expect(history.map((record) => record.outcome)).toEqual(Array(12).fill('completed'));
  });

  it('keeps 2 processes x 50 runs on one session: every turn once, each run’s messages together and in order', async () => {
    const path = join(directory, 'crowd.db');
    const processes = ['A', 'B'].map((label) =>
      startNodeScript('agent-turns.mjs', [path, 'shared', 'ada', '50', label]),
    );
    for (const process of processes) expect((await process.exited).code, process.stderr()).toBe(0);
    const history = await historyOf(path, 'shared', 'ada');
    expect(history).toHaveLength(400);
    const turns = new Set<string>();
    for (let index = 0; index < history.length; index += 4) {
      const turn = history.slice(index, index + 4);
      const operation = turn[0]?.operationId;
      expect(turn.every((record) => record.operationId === operation)).toBe(true);
      const question = JSON.parse(turn[0]?.message ?? '{}') as { role: string; content: string };
      expect(question.role).toBe('user');
      const [label, , run] = question.content.split(' ');
      const answer = JSON.parse(turn[3]?.message ?? '{}') as { role: string; content: string };
      expect(answer).toMatchObject({ role: 'assistant', content: `${label} answer ${run}` });
      expect(JSON.parse(turn[1]?.message ?? '{}')).toMatchObject({ role: 'assistant' });
      expect(JSON.parse(turn[2]?.message ?? '{}')).toMatchObject({ role: 'tool' });
      const key = `${label} ${run}`;
      expect(turns.has(key)).toBe(false);
      turns.add(key);
    }
    expect(turns.size).toBe(100);
    // Each run saw every turn written before it: the model's first request grew by one turn each time.
    const seen = processes
      .flatMap((process) => said(process.lines).map((line) => line.seen))
      .sort((a, b) => a - b);
    expect(seen).toEqual(Array.from({ length: 100 }, (_, index) => index * 4 + 1));
  });

  it('fails a run cleanly, without a crash, on a file of a newer schema and on a damaged session', async () => {
    const newer = join(directory, 'newer.db');
    const damaged = join(directory, 'damaged.db');
    for (const path of [newer, damaged]) {
      const seeded = startNodeScript('agent-turns.mjs', [path, 'chat', 'ada', '1', 'seed']);
      expect((await seeded.exited).code, seeded.stderr()).toBe(0);
    }
    const raw = [rawDatabase(newer), rawDatabase(damaged)];
    try {
      await raw[0]?.execute({ sql: 'UPDATE ghost_schema SET version = ?', args: [sqliteSchemaVersion + 1] });
      await raw[1]?.execute("UPDATE ghost_sessions SET state = 'not json'");
    } finally {
      for (const client of raw) client.close();
    }
    for (const path of [newer, damaged]) {
      const run = startNodeScript('agent-turns.mjs', [path, 'chat', 'ada', '1', 'next']);
      const end = await run.exited;
      expect(end, run.stderr()).toEqual({ code: 1, signal: null });
      expect(run.stderr()).toBe('');
      expect(said(run.lines)).toEqual([
        { run: 0, outcome: 'failed', seen: 0, error: 'SESSION_STORE_FAILED' },
      ]);
    }
  });
});

describe('ids and actors through agent.ask', () => {
  it('stores ids and actors with quotes, %, _ and 256 characters verbatim, and refuses NUL and 10 KB', async () => {
    const path = join(directory, 'ids.db');
    const sessionStore = storeAt(path);
    const runtime = createRuntime({ sessionStore });
    const echo = defineTool({
      name: 'echo',
      description: 'Echoes.',
      input: Type.Object({ text: Type.String() }),
      execute: ({ text }) => ({ text }),
    });
    const ask = (id: string, actor: string, text: string) =>
      defineAgent({
        name: 'ids',
        model: new ScriptedModel([
          { toolCalls: [{ name: 'echo', input: { text } }] },
          { text: `said ${text}` },
        ]),
        tools: [echo],
      }).ask(text, { runtime, session: { id, actor } });
    const odd = [
      [`it's "quoted"`, '100% _wild_'],
      ["'; DROP TABLE ghost_sessions; --", '%'],
      ['_', `x'${'y'.repeat(253)}`],
    ] as const;
    for (const [id, actor] of odd) {
      expect((await ask(id, actor, 'first')).outcome).toBe('completed');
      const second = await ask(id, actor, 'second');
      expect(second.outcome).toBe('completed');
      expect(second.messages.filter((entry) => entry.role === 'user').map((entry) => entry.content)).toEqual([
        'first',
        'second',
      ]);
      const listed = await sessionStore.list({ actor });
      expect(listed.sessions.map((summary) => [summary.id, summary.actor])).toEqual([[id, actor]]);
    }
    expect((await sessionStore.list({ actor: '100%' })).sessions).toEqual([]);
    for (const [id, actor] of [
      ['nul\u0000inside', 'ada'],
      ['fine', 'x'.repeat(10 * 1024)],
    ]) {
      const refused = await Promise.resolve()
        .then(() => ask(id as string, actor as string, 'never'))
        .then(
          (run) => run.error,
          (error: unknown) => error,
        );
      expect((refused as { code?: string }).code).toBe('SESSION_OPTION_INVALID');
    }
    await runtime.close();
  });
});
