import { createHash } from 'node:crypto';
import {
  ConfigurationError,
  createRuntime,
  defineAgent,
  defineTool,
  SessionBusyError,
  type SessionStoreV1,
} from '@ghost/core';
import type { SessionWrite } from '@ghost/core/session-store';
import { SessionStoreError } from '@ghost/core/session-store';
import { ScriptedModel } from '@ghost/core/testing';
import pg from 'pg';
import Type from 'typebox';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { postgresSessionStore } from './postgres-session-store.js';
import { presenceLockSpace } from './store-presence.js';
import { describeWithPostgres } from './test-support/describe-with-postgres.js';

const actor = 'user-42';

function write(
  operationId: string,
  messages: readonly string[],
  state?: Record<string, unknown>,
): SessionWrite {
  const content = { messages, ...(state === undefined ? {} : { state }) };
  return {
    operationId,
    digest: createHash('sha256').update(JSON.stringify(content)).digest('hex'),
    ...(content as { messages: readonly string[] }),
    ...(state === undefined ? {} : { state: state as never }),
  };
}

function userMessage(text: string): string {
  return JSON.stringify({ content: text, role: 'user' });
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => new Error('expected a rejection'),
    (error: unknown) => error,
  );
}

describeWithPostgres('postgresSessionStore', ({ cluster }) => {
  let connectionString = '';
  let schemas = 0;
  const cleanups: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    connectionString = await cluster().createDatabase();
  });

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A store on a schema of its own, closed after the test. */
  function makeStore(options: { schema?: string; leaseMs?: number } = {}): SessionStoreV1 {
    schemas += 1;
    const store = postgresSessionStore(
      { connectionString },
      {
        schema: options.schema ?? `store_${schemas}`,
        ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
      },
    );
    cleanups.push(() => store.close());
    return store;
  }

  const sql = (text: string, values: readonly unknown[] = []) =>
    cluster().sql(text, values, new URL(connectionString).pathname.slice(1));

  describe('options', () => {
    it('refuses a missing or doubled connection, an unknown option, a bad schema name or lease', () => {
      const bad: [unknown, unknown][] = [
        [undefined, {}],
        [{}, {}],
        [{ connectionString: '' }, {}],
        [{ connectionString, pool: new pg.Pool() }, {}],
        [{ connectionString, poolSize: 1 }, {}],
        [{ connectionString }, { schema: 'Has-Capitals' }],
        [{ connectionString }, { schema: 'x'.repeat(64) }],
        [{ connectionString }, { schema: 'public"; DROP TABLE x; --' }],
        [{ connectionString }, { leaseMs: 10 }],
        [{ connectionString }, { lease: 1000 }],
      ];
      for (const [connection, options] of bad) {
        expect(
          () => postgresSessionStore(connection as never, options as never),
          JSON.stringify(options),
        ).toThrow(ConfigurationError);
      }
    });
  });

  describe('schema versions', () => {
    it('migrates once when many stores start at once on an empty schema', async () => {
      const stores = Array.from({ length: 6 }, () => makeStore({ schema: 'crowded_start' }));
      await Promise.all(stores.map((store) => store.list({ actor })));
      const { rows } = await sql('SELECT version FROM crowded_start.ghost_migrations ORDER BY version');
      expect(rows).toEqual([{ version: 1 }, { version: 2 }]);
    });

    it('upgrades a schema of release 1 (no paused runs) in place, keeping its sessions', async () => {
      const first = makeStore({ schema: 'release_1' });
      const session = await first.open({ id: 'chat', actor, lockTimeoutMs: 1_000 });
      await session.write(write('w1', [userMessage('kept')], { topic: 'refunds' }));
      await session.release();
      await first.close();
      // What release 1 left: no pause column, migrations up to version 1.
      await sql('ALTER TABLE release_1.ghost_sessions DROP COLUMN pause');
      await sql('DELETE FROM release_1.ghost_migrations WHERE version > 1');
      const store = makeStore({ schema: 'release_1' });
      expect((await store.list({ actor })).sessions.map((summary) => summary.hasPausedRun)).toEqual([false]);
      const { rows } = await sql('SELECT version FROM release_1.ghost_migrations ORDER BY version');
      expect(rows).toEqual([{ version: 1 }, { version: 2 }]);
      const again = await store.open({ id: 'chat', actor, lockTimeoutMs: 1_000 });
      expect(again.state).toEqual({ topic: 'refunds' });
      expect(again.pause).toBeUndefined();
      expect((await again.history({ limit: 10 })).map((record) => record.message)).toEqual([
        userMessage('kept'),
      ]);
      await again.write({
        operationId: 'pause',
        digest: 'pause-digest',
        messages: [],
        pause: '{"runId":"run-1"}',
      });
      await again.release();
      const third = await store.open({ id: 'chat', actor, lockTimeoutMs: 1_000 });
      expect(third.pause).toBe('{"runId":"run-1"}');
      await third.release();
    });

    it('refuses a schema written by a newer release, saying to upgrade, and changes nothing', async () => {
      const store = makeStore({ schema: 'from_the_future' });
      await store.list({ actor });
      await sql("INSERT INTO from_the_future.ghost_migrations (version, name) VALUES (99, 'later')");
      const later = makeStore({ schema: 'from_the_future' });
      const error = await failure(later.open({ id: 'chat', actor, lockTimeoutMs: 1_000 }));
      expect(SessionStoreError.isInstance(error)).toBe(true);
      expect((error as SessionStoreError).reason).toBe('schema');
      expect((error as Error).message).toMatch(/version 99.*upgrade @ghost\/session-postgres/);
      const { rows } = await sql('SELECT max(version) AS version FROM from_the_future.ghost_migrations');
      expect(rows[0]?.version).toBe(99);
    });

    it("refuses tables named like Ghost's that Ghost did not make", async () => {
      await sql('CREATE SCHEMA not_ghosts');
      await sql('CREATE TABLE not_ghosts.ghost_sessions (id serial, note text)');
      const error = await failure(makeStore({ schema: 'not_ghosts' }).list({ actor }));
      expect(SessionStoreError.isInstance(error)).toBe(true);
      expect((error as SessionStoreError).reason).toBe('schema');
      expect((error as Error).message).toContain('ghost_sessions');

      await sql('CREATE SCHEMA other_migrations');
      await sql('CREATE TABLE other_migrations.ghost_migrations (id serial, script text)');
      const foreign = await failure(makeStore({ schema: 'other_migrations' }).list({ actor }));
      expect((foreign as SessionStoreError).reason).toBe('schema');
    });
  });

  describe('corrupt rows', () => {
    async function storedSession(schema: string) {
      const store = makeStore({ schema });
      const session = await store.open({ id: 'chat', actor, lockTimeoutMs: 1_000 });
      await session.write(write('w1', [userMessage('a'), userMessage('b'), userMessage('c')], { k: 1 }));
      await session.release();
      return store;
    }

    const cases: [string, string, RegExp][] = [
      ['state that is not JSON', "UPDATE {s}.ghost_sessions SET state = '{not json'", /state is not JSON/],
      ['state that is not an object', "UPDATE {s}.ghost_sessions SET state = '[1, 2]'", /not a JSON object/],
      ['a count that disagrees with the rows', 'UPDATE {s}.ghost_sessions SET message_count = 5', /counts 5/],
      ['a missing last message', 'DELETE FROM {s}.ghost_session_messages WHERE position = 2', /counts 3/],
    ];
    for (const [what, statement, message] of cases) {
      it(`opens a session with ${what} as a SessionStoreError (corrupt), never a crash`, async () => {
        const schema = `corrupt_${what.replace(/\W+/g, '_')}`.toLowerCase().slice(0, 60);
        const store = await storedSession(schema);
        await sql(statement.replaceAll('{s}', schema));
        const error = await failure(store.open({ id: 'chat', actor, lockTimeoutMs: 1_000 }));
        expect(SessionStoreError.isInstance(error)).toBe(true);
        expect((error as SessionStoreError).reason).toBe('corrupt');
        expect((error as SessionStoreError).store).toBe('postgres');
        expect((error as Error).message).toMatch(message);
        // The lock taken for the open was given back.
        const locks = await sql(`SELECT count(*)::int AS count FROM ${schema}.ghost_session_locks`);
        expect(locks.rows[0]?.count).toBe(0);
      });
    }

    it('reads an unknown outcome or a hole in the window as corrupt', async () => {
      const store = await storedSession('corrupt_rows');
      await sql("UPDATE corrupt_rows.ghost_session_messages SET outcome = 'exploded' WHERE position = 2");
      const session = await store.open({ id: 'chat', actor, lockTimeoutMs: 1_000 });
      const error = await failure(session.history({ limit: 10 }));
      expect((error as SessionStoreError).reason).toBe('corrupt');
      expect((error as Error).message).toContain('exploded');
      await sql('UPDATE corrupt_rows.ghost_session_messages SET outcome = NULL');
      await sql('UPDATE corrupt_rows.ghost_session_messages SET position = 7 WHERE position = 1');
      const hole = await failure(session.history({ limit: 10 }));
      expect((hole as SessionStoreError).reason).toBe('corrupt');
      await session.release();
    });

    it('fails a run on a corrupt stored message with a SessionStoreError naming the store', async () => {
      const store = await storedSession('corrupt_message');
      await sql(
        "UPDATE corrupt_message.ghost_session_messages SET message = 'not a message' WHERE position = 1",
      );
      const agent = defineAgent({ name: 'a', model: new ScriptedModel([{ text: 'never' }]) });
      const run = await agent.ask('hello', {
        runtime: createRuntime({ sessionStore: store }),
        session: { id: 'chat', actor },
      });
      expect(run.outcome).toBe('failed');
      expect(SessionStoreError.isInstance(run.error)).toBe(true);
      expect((run.error as SessionStoreError).reason).toBe('corrupt');
      expect(run.error?.message).toContain("'postgres'");
    });
  });

  describe('the history window', () => {
    it('reads only the window from the index, however long the history', async () => {
      const store = makeStore({ schema: 'long_history' });
      const session = await store.open({ id: 'long', actor, lockTimeoutMs: 1_000 });
      for (let batch = 0; batch < 10; batch += 1) {
        const messages = Array.from({ length: 1_000 }, (_, index) =>
          userMessage(`m${batch * 1_000 + index}`),
        );
        await session.write(write(`batch-${batch}`, messages));
      }
      const window = await session.history({ limit: 50 });
      expect(window.map((record) => record.position)).toEqual(
        Array.from({ length: 50 }, (_, index) => 9_950 + index),
      );
      await session.release();
      // The statement history() runs, as PostgreSQL plans and executes it, with the statistics it
      // has right after the history grew (none: nothing has analyzed the table yet).
      const { rows } = await sql(
        `EXPLAIN (ANALYZE, FORMAT JSON)
         SELECT position, message FROM long_history.ghost_session_messages
         WHERE session_sequence = (SELECT sequence FROM long_history.ghost_sessions WHERE id = 'long')
           AND position >= 9950 AND position < 10000 ORDER BY position`,
      );
      // Every node that reads the messages table, and how many rows it read.
      const reads: string[] = [];
      const visit = (node: { [key: string]: unknown; Plans?: unknown[] }) => {
        if (node['Relation Name'] === 'ghost_session_messages') {
          reads.push(`${String(node['Node Type'])} ${String(node['Actual Rows'])}`);
        }
        for (const child of node.Plans ?? []) visit(child as typeof node);
      };
      const [explained] = (rows[0] as { 'QUERY PLAN': [{ Plan: { Plans?: unknown[] } }] })['QUERY PLAN'];
      visit(explained.Plan);
      expect(reads).toEqual(['Index Scan 50']);
    });
  });

  describe('locks across stores', () => {
    it('lets another store take a session at once when the holder’s presence connection dies, and fences the old holder', async () => {
      const first = makeStore({ schema: 'presence', leaseMs: 60_000 });
      const second = makeStore({ schema: 'presence', leaseMs: 60_000 });
      const held = await first.open({ id: 'chat', actor, lockTimeoutMs: 1_000 });
      await held.write(write('before', [userMessage('before')]));
      // What the server sees when the holder's process dies: its presence connection closes.
      const { rows } = await sql(
        `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = $1::oid AND granted`,
        [presenceLockSpace],
      );
      expect(rows).toHaveLength(1);
      await sql('SELECT pg_terminate_backend($1)', [rows[0]?.pid]);
      const taken = await second.open({ id: 'chat', actor, lockTimeoutMs: 10_000 });
      const error = await failure(held.write(write('late', [userMessage('late')])));
      expect(SessionBusyError.isInstance(error)).toBe(true);
      expect((error as SessionBusyError).reason).toBe('lock-lost');
      expect((await taken.history({ limit: 10 })).map((record) => record.message)).toEqual([
        userMessage('before'),
      ]);
      await taken.release();
      await held.release();
    });

    it('lets another store take an expired lease, and the old holder’s write is refused', async () => {
      const first = makeStore({ schema: 'expiry' });
      const second = makeStore({ schema: 'expiry' });
      const held = await first.open({ id: 'chat', actor, lockTimeoutMs: 1_000 });
      const busy = await failure(second.open({ id: 'chat', actor, lockTimeoutMs: 300 }));
      expect((busy as SessionBusyError).reason).toBe('timeout');
      // A holder whose renewals stopped (a frozen process on a live connection), seen from outside.
      await sql("UPDATE expiry.ghost_session_locks SET expires_at = now() - interval '1 second'");
      const taken = await second.open({ id: 'chat', actor, lockTimeoutMs: 5_000 });
      const error = await failure(held.write(write('late', [userMessage('late')])));
      expect((error as SessionBusyError).reason).toBe('lock-lost');
      expect(taken.messageCount).toBe(0);
      await taken.write(write('mine', [userMessage('mine')]));
      await taken.release();
      await held.release();
      const check = await first.open({ id: 'chat', actor, lockTimeoutMs: 1_000 });
      expect((await check.history({ limit: 10 })).map((record) => record.message)).toEqual([
        userMessage('mine'),
      ]);
      await check.release();
    });

    it('keeps a lease alive by renewing it while a run holds the session longer than the lease', async () => {
      const first = makeStore({ schema: 'renewal', leaseMs: 300 });
      const second = makeStore({ schema: 'renewal', leaseMs: 300 });
      const held = await first.open({ id: 'chat', actor, lockTimeoutMs: 1_000 });
      const busy = await failure(second.open({ id: 'chat', actor, lockTimeoutMs: 1_200 }));
      expect((busy as SessionBusyError).reason).toBe('timeout');
      expect((await held.write(write('still-mine', [userMessage('x')]))).status).toBe('applied');
      await held.release();
    });
  });

  describe('prune', () => {
    it('leaves a session a run holds in another store alone, even with a cutoff in the future', async () => {
      const first = makeStore({ schema: 'pruning' });
      const second = makeStore({ schema: 'pruning' });
      for (const id of ['idle', 'held']) {
        const session = await first.open({ id, actor, lockTimeoutMs: 1_000 });
        await session.write(write('w', [userMessage(id)]));
        await session.release();
      }
      const held = await first.open({ id: 'held', actor, lockTimeoutMs: 1_000 });
      expect(await second.prune({ olderThan: new Date(Date.now() + 3_600_000) })).toBe(1);
      const busy = await failure(second.open({ id: 'held', actor, lockTimeoutMs: 200 }));
      expect((busy as SessionBusyError).reason).toBe('timeout');
      expect((await held.write(write('after-prune', [userMessage('still here')]))).status).toBe('applied');
      await held.release();
      expect((await second.list({ actor })).sessions.map((summary) => summary.id)).toEqual(['held']);
    });
  });

  describe('what cannot be kept verbatim', () => {
    it('refuses NUL in a message, an operation id or a paused run with a ConfigurationError, writing nothing', async () => {
      const store = makeStore();
      const session = await store.open({ id: 'chat', actor, lockTimeoutMs: 1_000 });
      for (const bad of [
        write('op', ['{"content":"a\u0000b","role":"user"}']),
        write('op\u0000x', [userMessage('a')]),
        { ...write('op', [userMessage('a')]), pause: '{"note":"a\u0000b"}' },
      ]) {
        expect(ConfigurationError.isInstance(await failure(session.write(bad)))).toBe(true);
      }
      expect(await session.history({ limit: 10 })).toEqual([]);
      expect(session.pause).toBeUndefined();
      await session.release();
    });
  });

  describe('pools', () => {
    async function connectionsTo(database: string): Promise<number> {
      const { rows } = await cluster().sql(
        'SELECT count(*)::int AS count FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [database],
      );
      return rows[0]?.count as number;
    }

    it('ends the pool it made on close, and leaves an application’s pool open', async () => {
      const database = new URL(connectionString).pathname.slice(1);
      const own = postgresSessionStore({ connectionString }, { schema: 'pools' });
      const session = await own.open({ id: 'chat', actor, lockTimeoutMs: 1_000 });
      await session.write(write('w', [userMessage('a')]));
      await session.release();
      expect(await connectionsTo(database)).toBeGreaterThan(0);
      await own.close();
      expect(await connectionsTo(database)).toBe(0);

      const pool = new pg.Pool({ connectionString, max: 3 });
      pool.on('error', () => {});
      cleanups.push(() => pool.end());
      const shared = postgresSessionStore({ pool }, { schema: 'pools' });
      const again = await shared.open({ id: 'chat', actor, lockTimeoutMs: 1_000 });
      await again.release();
      await shared.close();
      const { rows } = await pool.query('SELECT 1 AS one');
      expect(rows).toEqual([{ one: 1 }]);
      // The presence connection it kept went back closed; the pool's own idle ones stay.
      expect(pool.totalCount).toBeLessThanOrEqual(2);
    });

    it('releases the sessions its runs hold when closed, so others take them at once', async () => {
      const first = makeStore({ schema: 'closing', leaseMs: 60_000 });
      const second = makeStore({ schema: 'closing', leaseMs: 60_000 });
      await first.open({ id: 'chat', actor, lockTimeoutMs: 1_000 });
      await first.close();
      const taken = await second.open({ id: 'chat', actor, lockTimeoutMs: 2_000 });
      await taken.release();
    });
  });

  describe('runs end to end', () => {
    const lookup = defineTool({
      name: 'lookup',
      description: 'Finds an entry.',
      input: Type.Object({ topic: Type.String() }),
      execute: ({ topic }) => `entry for ${topic}`,
    });

    it('serves 50 concurrent sessions through one pool, each with a few turns, all correct', async () => {
      const store = makeStore({ schema: 'fifty' });
      const runtime = createRuntime({ sessionStore: store });
      await Promise.all(
        Array.from({ length: 50 }, async (_, chat) => {
          const model = new ScriptedModel([
            { toolCalls: [{ name: 'lookup', input: { topic: `t${chat}` } }] },
            { text: `answer ${chat}.1` },
            { text: `answer ${chat}.2` },
            { text: `answer ${chat}.3` },
          ]);
          const agent = defineAgent({ name: 'a', model, tools: [lookup] });
          const session = { id: `chat-${chat}`, actor: `user-${chat % 7}` };
          for (let turn = 1; turn <= 3; turn += 1) {
            const run = await agent.ask(`question ${chat}.${turn}`, { runtime, session });
            expect(run.outcome, run.error?.message).toBe('completed');
          }
          // The third model call saw the first two turns whole: question, tool call, result, answer, ...
          const seen = model.calls
            .at(-1)
            ?.messages.map((message) =>
              typeof message.content === 'string' ? message.content : message.role,
            );
          expect(seen).toEqual([
            `question ${chat}.1`,
            '',
            `entry for t${chat}`,
            `answer ${chat}.1`,
            `question ${chat}.2`,
            `answer ${chat}.2`,
            `question ${chat}.3`,
          ]);
        }),
      );
      const { rows } = await sql(
        'SELECT count(*)::int AS sessions, sum(message_count)::int AS messages FROM fifty.ghost_sessions',
      );
      expect(rows[0]).toEqual({ sessions: 50, messages: 50 * 8 });
    });

    it('keeps ids and actors with quotes, % and _ verbatim through agent.ask, and refuses NUL and 10 KB ones', async () => {
      const store = makeStore({ schema: 'odd_ids' });
      const runtime = createRuntime({ sessionStore: store });
      const odd = [`it's "quoted"`, '100% _wild_', "'; DROP TABLE ghost_sessions; --", 'a\\b %_ é 🎉'];
      for (const id of odd) {
        const agent = defineAgent({ name: 'a', model: new ScriptedModel([{ text: `hi ${id}` }]) });
        const run = await agent.ask('hello', { runtime, session: { id, actor: id } });
        expect(run.outcome).toBe('completed');
      }
      const { rows } = await sql('SELECT id, actor FROM odd_ids.ghost_sessions ORDER BY sequence');
      expect(rows).toEqual(odd.map((id) => ({ id, actor: id })));
      expect((await store.list({ actor: '100%' })).sessions).toEqual([]);
      for (const bad of ['nul\u0000inside', 'x'.repeat(10 * 1024)]) {
        const agent = defineAgent({ name: 'a', model: new ScriptedModel([{ text: 'never' }]) });
        for (const session of [
          { id: bad, actor },
          { id: 'fine', actor: bad },
        ]) {
          const error = await failure(agent.ask('hello', { runtime, session }));
          expect(ConfigurationError.isInstance(error)).toBe(true);
        }
      }
      const after = await sql('SELECT count(*)::int AS count FROM odd_ids.ghost_sessions');
      expect(after.rows[0]?.count).toBe(odd.length);
    });
  });
});
