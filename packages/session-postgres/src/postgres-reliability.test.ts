import { access } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { describeWithPostgres } from './test-support/describe-with-postgres.js';
import { SessionServerProcess } from './test-support/session-server-process.js';

// The servers import the built packages, as an application does: `pnpm build` makes them.
const builtStore = fileURLToPath(new URL('../dist/index.js', import.meta.url));

const answer = (text: string) => [{ text }];
const slowThenAnswer = [{ toolCalls: [{ name: 'slow_step', input: {} }] }, { text: 'after the slow step' }];

describeWithPostgres('postgres sessions across processes', ({ cluster }) => {
  let connectionString = '';
  let schemas = 0;
  const servers: SessionServerProcess[] = [];

  beforeAll(async () => {
    await access(builtStore).catch(() => {
      throw new Error(`${builtStore} is missing: run pnpm build first.`);
    });
    connectionString = await cluster().createDatabase();
  });

  afterEach(async () => {
    const started = servers.splice(0);
    await Promise.all(started.map((server) => server.stop()));
    for (const server of started) expect(server.fatal, 'an unhandled error in a server').toBeUndefined();
  });

  function nextSchema(): string {
    schemas += 1;
    return `reliability_${schemas}`;
  }

  async function startServers(count: number, schema: string): Promise<SessionServerProcess[]> {
    const started = await Promise.all(
      Array.from({ length: count }, () => SessionServerProcess.start(connectionString, schema)),
    );
    servers.push(...started);
    return started;
  }

  const sql = (text: string, values: readonly unknown[] = []) =>
    cluster().sql(text, values, new URL(connectionString).pathname.slice(1));

  async function storedTexts(schema: string, id: string): Promise<{ text: string; operation: string }[]> {
    const { rows } = await sql(
      `SELECT m.message, m.operation_id FROM ${schema}.ghost_session_messages m
       JOIN ${schema}.ghost_sessions s ON s.sequence = m.session_sequence
       WHERE s.id = $1 ORDER BY m.position`,
      [id],
    );
    return rows.map((row) => ({
      text: (JSON.parse(row.message as string) as { content: string }).content,
      operation: row.operation_id as string,
    }));
  }

  it('serves one conversation from two processes in turns: each model sees the other’s turns', async () => {
    const schema = nextSchema();
    const [first, second] = await startServers(2, schema);
    const session = { id: 'load-balanced', actor: 'user-7' };
    const turns: [SessionServerProcess | undefined, string, string][] = [
      [first, 'I am Ada.', 'Hello Ada.'],
      [second, 'What is my name?', 'Your name is Ada.'],
      [first, 'And my plan?', 'You did not say.'],
      [second, 'It is pro.', 'Noted: pro.'],
    ];
    const said: string[] = [];
    for (const [server, question, reply] of turns) {
      const run = await server!.ask(question, session, answer(reply));
      expect(run.outcome, run.error?.message).toBe('completed');
      expect(run.seen[0]?.map((message) => message.content)).toEqual([...said, question]);
      said.push(question, reply);
    }
    expect((await storedTexts(schema, session.id)).map((entry) => entry.text)).toEqual(said);
  });

  it('leaves the whole earlier history and no half turn when a process is killed mid-run, and the next run in another process works at once', async () => {
    const schema = nextSchema();
    const [doomed, survivor] = await startServers(2, schema);
    const session = { id: 'killed', actor: 'user-1', lockTimeoutMs: 5_000 };
    await doomed!.ask('first question', session, answer('first answer'));
    await survivor!.ask('second question', session, answer('second answer'));
    const inTool = doomed!.nextEvent('in-tool');
    const dying = doomed!
      .ask('the question of the killed run', session, slowThenAnswer)
      .catch(() => 'killed');
    await inTool;
    doomed!.kill();
    await doomed!.exited;
    expect(await dying).toBe('killed');

    // The lease is 30 s, but the holder's presence connection died with it: the session is free now
    // (within the 5 s lockTimeoutMs).
    const next = await survivor!.ask('after the kill', session, answer('still here'));
    expect(next.outcome, next.error?.message).toBe('completed');
    expect(next.seen[0]?.map((message) => message.content)).toEqual([
      'first question',
      'first answer',
      'second question',
      'second answer',
      'after the kill',
    ]);
    const stored = await storedTexts(schema, session.id);
    expect(stored.map((entry) => entry.text)).toEqual([
      'first question',
      'first answer',
      'second question',
      'second answer',
      'after the kill',
      'still here',
    ]);
  });

  it('keeps every turn of 2 processes x 50 runs on one session once, together and in order', {
    timeout: 60_000,
  }, async () => {
    const schema = nextSchema();
    const pair = await startServers(2, schema);
    const session = { id: 'contended', actor: 'user-2', lockTimeoutMs: 50_000, historyLimit: 4 };
    await Promise.all(
      pair.map(async (server, process) => {
        for (let run = 0; run < 50; run += 1) {
          const reply = await server.ask(`q ${process}-${run}`, session, answer(`a ${process}-${run}`));
          expect(reply.outcome, reply.error?.message).toBe('completed');
        }
      }),
    );
    const stored = await storedTexts(schema, session.id);
    expect(stored).toHaveLength(200);
    const seen = new Set<string>();
    const nextRun = [0, 0];
    for (let index = 0; index < stored.length; index += 2) {
      const question = stored[index];
      const reply = stored[index + 1];
      const [, process, run] = /^q (\d)-(\d+)$/.exec(question?.text ?? '') ?? [];
      expect(reply?.text).toBe(`a ${process}-${run}`);
      expect(reply?.operation).toBe(question?.operation);
      expect(seen.has(question?.operation ?? '')).toBe(false);
      seen.add(question?.operation ?? '');
      // Each process's runs land in the order it made them.
      expect(Number(run)).toBe(nextRun[Number(process)]);
      nextRun[Number(process)] = Number(run) + 1;
    }
  });

  describe('a server that goes away', () => {
    it('fails a run cleanly when PostgreSQL stops during a tool call, writes nothing half-way, and works after the restart', {
      timeout: 60_000,
    }, async () => {
      const schema = nextSchema();
      const [server] = await startServers(1, schema);
      const session = { id: 'outage', actor: 'user-3', lockTimeoutMs: 10_000 };
      await server!.ask('before the outage', session, answer('fine'));

      const inTool = server!.nextEvent('in-tool');
      const during = server!.ask('during the outage', session, slowThenAnswer);
      await inTool;
      await cluster().stopServer();
      await server!.request({ op: 'continue' });
      const failed = await during;
      expect(failed.outcome).toBe('failed');
      expect(failed.error).toMatchObject({
        name: 'SessionStoreError',
        code: 'SESSION_STORE_FAILED',
        reason: 'unavailable',
        store: 'postgres',
      });
      expect(failed.error?.message).toContain("Session store 'postgres'");

      // While it is down, a new run fails at once with the same error, and the server lives on.
      const refused = await server!.ask('still down', session, answer('never'));
      expect(refused.error?.reason).toBe('unavailable');

      await cluster().startServer();
      const after = await server!.ask('after the restart', session, answer('back'));
      expect(after.outcome, after.error?.message).toBe('completed');
      expect(after.seen[0]?.map((message) => message.content)).toEqual([
        'before the outage',
        'fine',
        'after the restart',
      ]);
      expect((await storedTexts(schema, session.id)).map((entry) => entry.text)).toEqual([
        'before the outage',
        'fine',
        'after the restart',
        'back',
      ]);
    });
  });

  it('fails a run with a clear error, and no crash, on a newer schema version and on a corrupt row', async () => {
    const schema = nextSchema();
    const [server] = await startServers(1, schema);
    const session = { id: 'damaged', actor: 'user-4' };
    await server!.ask('hello', session, answer('hi'));

    await sql(`UPDATE ${schema}.ghost_session_messages SET message = '{"role":"robot"}' WHERE position = 1`);
    const corrupt = await server!.ask('again', session, answer('never'));
    expect(corrupt.outcome).toBe('failed');
    expect(corrupt.error).toMatchObject({ name: 'SessionStoreError', reason: 'corrupt', store: 'postgres' });

    await sql(`INSERT INTO ${schema}.ghost_migrations (version, name) VALUES (99, 'from a later release')`);
    const [later] = await startServers(1, schema);
    const newer = await later!.ask('hello', { id: 'other', actor: 'user-4' }, answer('never'));
    expect(newer.outcome).toBe('failed');
    expect(newer.error).toMatchObject({ name: 'SessionStoreError', reason: 'schema', store: 'postgres' });
    expect(newer.error?.message).toContain('upgrade @ghost/session-postgres');
  });
});
