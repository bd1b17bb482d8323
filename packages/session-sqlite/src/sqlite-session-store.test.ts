import { createHash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigurationError } from '@ghost/core';
import {
  SessionBusyError,
  SessionStoreError,
  type SessionStoreV1,
  type SessionWrite,
} from '@ghost/core/session-store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { historyQuery, listQuery } from './session-queries.js';
import { sqliteSchemaVersion } from './sqlite-schema.js';
import { sqliteSessionStore } from './sqlite-session-store.js';
import { rawDatabase } from './test-support/raw-database.js';

let directory = '';
const stores: SessionStoreV1[] = [];

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'ghost-sqlite-'));
});
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  await rm(directory, { recursive: true, force: true });
});

function storeAt(
  path: string,
  options: Partial<Parameters<typeof sqliteSessionStore>[0]> = {},
): SessionStoreV1 {
  const store = sqliteSessionStore({ path, ...options });
  stores.push(store);
  return store;
}

function message(text: string): string {
  return JSON.stringify({ content: text, role: 'user' });
}

function write(
  operationId: string,
  messages: readonly string[],
  state?: Record<string, string>,
): SessionWrite {
  const content = { messages, ...(state === undefined ? {} : { state }) };
  return {
    operationId,
    digest: createHash('sha256').update(JSON.stringify(content)).digest('hex'),
    ...content,
  };
}

async function seed(
  store: SessionStoreV1,
  id: string,
  messages: readonly string[],
  state?: Record<string, string>,
) {
  const session = await store.open({ id, actor: 'ada', lockTimeoutMs: 5_000 });
  await session.write(write(`seed-${id}`, messages, state));
  await session.release();
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error,
  );
}

describe('sqliteSessionStore options', () => {
  it('refuses unknown options, a memory or URL path and out-of-range numbers with a ConfigurationError naming the option', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ path: 'x.db', lease: 5 }, 'lease'],
      [{ path: ':memory:' }, 'path'],
      [{ path: 'file:///tmp/x.db' }, 'path'],
      [{ path: '' }, 'path'],
      [{ path: 'a\u0000b' }, 'path'],
      [{ path: 'x.db', leaseMs: 10 }, 'leaseMs'],
      [{ path: 'x.db', busyTimeoutMs: -1 }, 'busyTimeoutMs'],
      [{ path: 'x.db', limits: { maxMessages: 0 } }, 'limits.maxMessages'],
      [{ path: 'x.db', limits: { maxMesages: 5 } }, 'maxMesages'],
    ];
    for (const [options, option] of cases) {
      let caught: unknown;
      try {
        sqliteSessionStore(options as never);
      } catch (error) {
        caught = error;
      }
      expect(ConfigurationError.isInstance(caught), JSON.stringify(options)).toBe(true);
      expect((caught as ConfigurationError).option).toBe(option);
    }
  });
});

describe('the database file', () => {
  it('opens the exact path given, spaces, #, ? and % included, creating its folder, private to its owner, in WAL mode', async () => {
    const path = join(directory, 'a folder #1', 'chats? 100% sure é.db');
    const store = storeAt(path);
    await seed(store, 'chat', [message('hello')]);
    expect(existsSync(path)).toBe(true);
    if (process.platform !== 'win32') expect(statSync(path).mode & 0o777).toBe(0o600);
    const sibling = storeAt(path);
    const session = await sibling.open({ id: 'chat', actor: 'ada', lockTimeoutMs: 1_000 });
    expect((await session.history({ limit: 10 })).map((record) => record.message)).toEqual([
      message('hello'),
    ]);
    await session.release();
    const raw = rawDatabase(path);
    try {
      expect((await raw.execute('PRAGMA journal_mode')).rows[0]?.journal_mode).toBe('wal');
    } finally {
      raw.close();
    }
  });

  it('migrates a new file once: opening it again leaves one schema row at the current version', async () => {
    const path = join(directory, 'sessions.db');
    await seed(storeAt(path), 'one', [message('a')]);
    await seed(storeAt(path), 'two', [message('b')]);
    const raw = rawDatabase(path);
    try {
      const { rows } = await raw.execute('SELECT store, version FROM ghost_schema');
      expect(rows.map((row) => [row.store, row.version])).toEqual([
        ['@ghost/session-sqlite', sqliteSchemaVersion],
      ]);
    } finally {
      raw.close();
    }
  });
});

describe('a file of an older release', () => {
  it('upgrades a version 1 file (no paused runs) in place, keeping its sessions', async () => {
    const path = join(directory, 'version-1.db');
    const first = storeAt(path);
    await seed(first, 'chat', [message('kept')], { topic: 'refunds' });
    await first.close();
    const raw = rawDatabase(path);
    try {
      // What release 1 left: no pause column, schema version 1.
      await raw.execute('ALTER TABLE ghost_sessions DROP COLUMN pause');
      await raw.execute('UPDATE ghost_schema SET version = 1');
      const store = storeAt(path);
      expect((await store.list({ actor: 'ada' })).sessions.map((summary) => summary.hasPausedRun)).toEqual([
        false,
      ]);
      expect((await raw.execute('SELECT version FROM ghost_schema')).rows[0]?.version).toBe(
        sqliteSchemaVersion,
      );
      const session = await store.open({ id: 'chat', actor: 'ada', lockTimeoutMs: 1_000 });
      expect(session.state).toEqual({ topic: 'refunds' });
      expect(session.pause).toBeUndefined();
      expect((await session.history({ limit: 10 })).map((record) => record.message)).toEqual([
        message('kept'),
      ]);
      const paused = { messages: [], pause: '{"runId":"run-1"}' };
      await session.write({ operationId: 'pause', digest: 'pause-digest', ...paused });
      await session.release();
      const again = await store.open({ id: 'chat', actor: 'ada', lockTimeoutMs: 1_000 });
      expect(again.pause).toBe('{"runId":"run-1"}');
      await again.release();
    } finally {
      raw.close();
    }
  });
});

describe('schemas it cannot use', () => {
  async function refusal(path: string): Promise<SessionStoreError> {
    const store = storeAt(path);
    const error = await failure(store.open({ id: 'chat', actor: 'ada', lockTimeoutMs: 1_000 }));
    expect(SessionStoreError.isInstance(error), String(error)).toBe(true);
    // The same error on every call, never a crash, and the store still closes.
    const again = await failure(store.list({ actor: 'ada' }));
    expect((again as SessionStoreError).reason).toBe((error as SessionStoreError).reason);
    await store.close();
    return error as SessionStoreError;
  }

  it('refuses a file written by a newer schema version, saying to upgrade, and leaves it unchanged', async () => {
    const path = join(directory, 'newer.db');
    await seed(storeAt(path), 'chat', [message('kept')]);
    const raw = rawDatabase(path);
    try {
      await raw.execute({ sql: 'UPDATE ghost_schema SET version = ?', args: [sqliteSchemaVersion + 1] });
      const error = await refusal(path);
      expect(error.reason).toBe('schema');
      expect(error.message).toContain('Upgrade @ghost/session-sqlite');
      expect(error.message).toContain(`schema version ${sqliteSchemaVersion + 1}`);
      expect((await raw.execute('SELECT version FROM ghost_schema')).rows[0]?.version).toBe(
        sqliteSchemaVersion + 1,
      );
      expect((await raw.execute('SELECT count(*) AS n FROM ghost_session_messages')).rows[0]?.n).toBe(1);
    } finally {
      raw.close();
    }
  });

  it("refuses tables of Ghost's names that Ghost did not make, and a file that is not a database", async () => {
    const foreign = join(directory, 'foreign.db');
    const raw = rawDatabase(foreign);
    await raw.execute('CREATE TABLE ghost_sessions (name TEXT)');
    raw.close();
    const foreignError = await refusal(foreign);
    expect(foreignError.reason).toBe('schema');
    expect(foreignError.message).toContain('ghost_sessions');

    const impostor = join(directory, 'impostor.db');
    const other = rawDatabase(impostor);
    await other.execute('CREATE TABLE ghost_schema (version TEXT)');
    await other.execute("INSERT INTO ghost_schema VALUES ('1')");
    other.close();
    expect((await refusal(impostor)).reason).toBe('schema');

    const text = join(directory, 'notes.txt');
    await writeFile(text, 'these are notes, not a database\n'.repeat(200));
    const textError = await refusal(text);
    expect(textError.reason).toBe('schema');
    expect(textError.message).toContain('not a SQLite database');
  });
});

describe('damaged rows', () => {
  async function damaged(change: string, id = 'chat') {
    const path = join(directory, `damaged-${Math.random()}.db`);
    const store = storeAt(path);
    await seed(store, id, [message('one'), message('two'), message('three')], { topic: 'refunds' });
    const raw = rawDatabase(path);
    try {
      await raw.execute(change);
    } finally {
      raw.close();
    }
    return store;
  }

  it('refuses to open a session whose state is not JSON, with a corrupt SessionStoreError, and can still delete it', async () => {
    const store = await damaged("UPDATE ghost_sessions SET state = '{not json'");
    const error = await failure(store.open({ id: 'chat', actor: 'ada', lockTimeoutMs: 1_000 }));
    expect(SessionStoreError.isInstance(error)).toBe(true);
    expect((error as SessionStoreError).reason).toBe('corrupt');
    expect((error as SessionStoreError).sessionId).toBe('chat');
    expect((error as Error).message).toContain('store.delete()');
    // No lease was left behind, and the way out works.
    expect(await store.delete({ id: 'chat', actor: 'ada', lockTimeoutMs: 0 })).toBe(true);
    const fresh = await store.open({ id: 'chat', actor: 'ada', lockTimeoutMs: 0 });
    expect(fresh.isNew).toBe(true);
    await fresh.release();
  });

  it('refuses to open a session whose paused run is not text, leaving no lease behind', async () => {
    const store = await damaged("UPDATE ghost_sessions SET pause = x'00ff'");
    expect((await store.list({ actor: 'ada' })).sessions.map((summary) => summary.hasPausedRun)).toEqual([
      true,
    ]);
    const error = await failure(store.open({ id: 'chat', actor: 'ada', lockTimeoutMs: 1_000 }));
    expect((error as SessionStoreError).reason).toBe('corrupt');
    expect((error as Error).message).toContain('pause');
    expect(await store.delete({ id: 'chat', actor: 'ada', lockTimeoutMs: 0 })).toBe(true);
  });

  it('refuses a session whose message count disagrees with its messages', async () => {
    const store = await damaged('UPDATE ghost_sessions SET message_count = 7');
    const error = await failure(store.open({ id: 'chat', actor: 'ada', lockTimeoutMs: 1_000 }));
    expect((error as SessionStoreError).reason).toBe('corrupt');
    expect((error as Error).message).toContain('counts 7 messages');
  });

  it('fails a history read that meets a message that is not text, or a missing message, as corrupt', async () => {
    const cases = [
      "UPDATE ghost_session_messages SET message = x'00ff' WHERE position = 1",
      'DELETE FROM ghost_session_messages WHERE position = 1',
      "UPDATE ghost_session_messages SET outcome = 'exploded' WHERE position = 2",
    ];
    for (const change of cases) {
      const store = await damaged(change);
      const session = await store.open({ id: 'chat', actor: 'ada', lockTimeoutMs: 1_000 });
      const error = await failure(session.history({ limit: 10 }));
      expect(SessionStoreError.isInstance(error), change).toBe(true);
      expect((error as SessionStoreError).reason, change).toBe('corrupt');
      // The newest message alone is still readable when it is intact.
      if (!change.includes('position = 2')) {
        expect((await session.history({ limit: 1 })).map((record) => record.position)).toEqual([2]);
      }
      await session.release();
    }
  });
});

describe('indexes', () => {
  it('reads a history window and a page of sessions through indexes, never scanning a table', async () => {
    const path = join(directory, 'plans.db');
    await seed(storeAt(path), 'chat', [message('a')]);
    const raw = rawDatabase(path);
    try {
      for (const [query, args] of [
        [historyQuery, [1, 10, 50]],
        [listQuery, ['ada', 100, 21]],
      ] as const) {
        const plan = await raw.execute({ sql: `EXPLAIN QUERY PLAN ${query}`, args: [...args] });
        const steps = plan.rows.map((row) => String(row.detail));
        expect(steps.join('\n'), query).toMatch(/^SEARCH .* USING (PRIMARY KEY|INDEX|COVERING INDEX)/m);
        for (const step of steps) expect(step, query).not.toMatch(/^SCAN|TEMP B-TREE/);
      }
    } finally {
      raw.close();
    }
  });
});

describe('leases in one process', () => {
  it('releases the sessions a store holds when it closes, so another store opens them at once', async () => {
    const path = join(directory, 'close.db');
    const first = storeAt(path);
    await first.open({ id: 'chat', actor: 'ada', lockTimeoutMs: 0 });
    await first.close();
    const second = storeAt(path);
    const session = await second.open({ id: 'chat', actor: 'ada', lockTimeoutMs: 0 });
    await session.release();
  });

  it('ends an open waiting for a session when its store closes, with a closed SessionStoreError', async () => {
    const path = join(directory, 'close-while-waiting.db');
    const holder = storeAt(path);
    const held = await holder.open({ id: 'chat', actor: 'ada', lockTimeoutMs: 0 });
    const waiter = storeAt(path);
    const waiting = failure(waiter.open({ id: 'chat', actor: 'ada', lockTimeoutMs: 60_000 }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    await waiter.close();
    const error = await waiting;
    expect(SessionStoreError.isInstance(error)).toBe(true);
    expect((error as SessionStoreError).reason).toBe('closed');
    await held.write(write('still-mine', [message('the holder goes on')]));
    await held.release();
  });

  it('keeps two stores over one file in this process from waiting on each other inside SQLite', async () => {
    const path = join(directory, 'two-stores.db');
    // No busy wait at all: a transaction begun while the other store's is open would fail at once
    // with SQLITE_BUSY (and with a busy timeout, block this thread, the other store's too, until it ran out).
    const [first, second] = [storeAt(path, { busyTimeoutMs: 0 }), storeAt(path, { busyTimeoutMs: 0 })];
    const one = await first?.open({ id: 'one', actor: 'ada', lockTimeoutMs: 1_000 });
    const two = await second?.open({ id: 'two', actor: 'ada', lockTimeoutMs: 1_000 });
    for (let round = 0; round < 10; round += 1) {
      // Started in the same tick, so their transactions would interleave without the shared queue.
      await Promise.all([
        one?.write(write(`one-${round}`, [message(`one ${round}`)])),
        two?.write(write(`two-${round}`, [message(`two ${round}`)])),
      ]);
    }
    expect([one?.messageCount, two?.messageCount]).toEqual([10, 10]);
    await one?.release();
    await two?.release();
  });

  it('fences a write whose lease another store took over, and writes nothing', async () => {
    const path = join(directory, 'fenced.db');
    const holder = storeAt(path);
    const session = await holder.open({ id: 'chat', actor: 'ada', lockTimeoutMs: 0 });
    // Another program deletes the lease row, as a takeover after expiry would replace it.
    const raw = rawDatabase(path);
    try {
      await raw.execute("UPDATE ghost_session_leases SET owner = 'someone else'");
    } finally {
      raw.close();
    }
    const error = await failure(session.write(write('late', [message('late')])));
    expect(SessionBusyError.isInstance(error)).toBe(true);
    expect((error as SessionBusyError).reason).toBe('lock-lost');
    await session.release();
    const check = rawDatabase(path);
    try {
      expect((await check.execute('SELECT count(*) AS n FROM ghost_sessions')).rows[0]?.n).toBe(0);
    } finally {
      check.close();
    }
  });
});

describe('prune', () => {
  it('prunes more sessions than one batch, and drops leases that ended without a release', async () => {
    const path = join(directory, 'prune.db');
    const store = storeAt(path);
    for (let index = 0; index < 230; index += 1) await seed(store, `old-${index}`, [message(String(index))]);
    const raw = rawDatabase(path);
    try {
      await raw.execute({
        sql: "INSERT INTO ghost_session_leases (session_id, owner, pid, host, expires_at) VALUES ('crashed', 'gone', 1, 'elsewhere', ?)",
        args: [Date.now() - 1_000],
      });
      expect(await store.prune({ olderThan: new Date(Date.now() + 1_000) })).toBe(230);
      expect((await raw.execute('SELECT count(*) AS n FROM ghost_session_leases')).rows[0]?.n).toBe(0);
      expect((await raw.execute('SELECT count(*) AS n FROM ghost_session_messages')).rows[0]?.n).toBe(0);
      expect((await raw.execute('SELECT count(*) AS n FROM ghost_session_operations')).rows[0]?.n).toBe(0);
    } finally {
      raw.close();
    }
  });
});
