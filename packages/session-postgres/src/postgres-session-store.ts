import { randomUUID } from 'node:crypto';
import { SessionBusyError, type SessionStoreV1 } from '@ghost/core';
import {
  checkSessionDeleteRequest,
  checkSessionListRequest,
  checkSessionOpenRequest,
  checkSessionPruneRequest,
  defaultSessionLimits,
  defineSessionStore,
  SessionAccessError,
  type SessionLimits,
  type SessionListRequest,
  type SessionOpenRequest,
  type SessionPage,
  SessionStoreError,
  sessionListCursor,
} from '@ghost/core/session-store';
import pg from 'pg';
import { OpenedPostgresSession, type OpenedSessionRow } from './opened-postgres-session.js';
import { PostgresDatabase, storeName } from './postgres-database.js';
import { ghostTables, migrateGhostTables } from './postgres-migrations.js';
import {
  checkPostgresConnection,
  checkPostgresStoreOptions,
  type PostgresSessionConnection,
  type PostgresSessionStoreOptions,
} from './postgres-session-store-options.js';
import { SessionLeases } from './session-leases.js';
import { corruptSession, readCount, readState, readTime } from './session-rows.js';
import { StorePresence } from './store-presence.js';

/** Sessions `prune` looks at in one transaction. */
const pruneBatch = 500;

function ownPool(connection: Extract<PostgresSessionConnection, { connectionString: string }>): pg.Pool {
  const pool = new pg.Pool({
    connectionString: connection.connectionString,
    max: connection.poolSize ?? 10,
    connectionTimeoutMillis: connection.connectionTimeoutMs ?? 5_000,
    query_timeout: connection.statementTimeoutMs ?? 60_000,
    idleTimeoutMillis: 10_000,
    keepAlive: true,
  });
  // An idle connection the server closed (a restart) is dropped and replaced by the pool; without
  // a listener its 'error' event would end the process.
  pool.on('error', () => {});
  return pool;
}

/**
 * A session store on PostgreSQL, for applications that run on more than one process or machine:
 * every store over the same database and schema shares the sessions, and a run holds its session
 * against all of them. Tables (prefixed `ghost_`) are created on first use and migrated by version;
 * locks are leases renewed while a run holds them, freed at once when the holding process dies.
 * `close()` ends the pool the store made, never one you gave it. See the package README.
 *
 * @example
 * ```ts
 * import { createRuntime } from '@ghost/core';
 * import { postgresSessionStore } from '@ghost/session-postgres';
 *
 * const sessionStore = postgresSessionStore({ connectionString: process.env.DATABASE_URL! });
 * const runtime = createRuntime({ sessionStore });
 * await agent.ask('Hi, I am Ada.', { runtime, session: { id: chatId, actor: userId } });
 * // ...
 * await sessionStore.close();
 * ```
 */
export function postgresSessionStore(
  connection: PostgresSessionConnection,
  options: PostgresSessionStoreOptions = {},
): SessionStoreV1 {
  const checkedConnection = checkPostgresConnection(connection);
  const checked = checkPostgresStoreOptions(options);
  const limits: SessionLimits = Object.freeze({ ...defaultSessionLimits, ...checked.limits });
  const database =
    'pool' in checkedConnection
      ? new PostgresDatabase(checkedConnection.pool, false)
      : new PostgresDatabase(ownPool(checkedConnection), true);
  const tables = ghostTables(checked.schema);
  const held = new Set<OpenedPostgresSession>();
  const presence: StorePresence = new StorePresence(database, {
    onRelease: (payload) => leases.wake(payload),
    onConnected: (key): Promise<void> =>
      leases.adopt(
        [...held].map((session) => session.holder),
        key,
      ),
  });
  const leases: SessionLeases = new SessionLeases(database, tables, presence, checked.leaseMs);
  let ready: Promise<void> | undefined;
  let isClosed = false;
  let closing: Promise<void> | undefined;

  const throwIfClosed = () => {
    if (isClosed) {
      throw new SessionStoreError(
        `Session store '${storeName}' is closed; create a new one with postgresSessionStore().`,
        { store: storeName, reason: 'closed' },
      );
    }
  };

  /** Migrates once per store; a failure (the server down, a newer schema) is tried again next call. */
  const prepare = () => {
    ready ??= migrateGhostTables(database, tables).catch((error: unknown) => {
      ready = undefined;
      throw error;
    });
    return ready;
  };

  const ownerOf = async (id: string): Promise<string | undefined> => {
    const { rows } = await database.run(
      `SELECT actor FROM ${tables.sessions} WHERE id = $1`,
      [id],
      'reading the session',
      id,
    );
    return rows[0]?.actor ?? undefined;
  };

  const readSessionRow = async (id: string, actor: string): Promise<OpenedSessionRow> => {
    const { rows } = await database.run(
      `SELECT s.sequence, s.actor, s.state, s.message_count, s.byte_count, s.pause,
              (SELECT m.position FROM ${tables.messages} m
               WHERE m.session_sequence = s.sequence ORDER BY m.position DESC LIMIT 1) AS last_position
       FROM ${tables.sessions} s WHERE s.id = $1`,
      [id],
      'opening the session',
      id,
    );
    const row = rows[0];
    if (row === undefined) {
      return { sequence: undefined, state: {}, messageCount: 0, byteCount: 0, pause: undefined };
    }
    if (row.actor !== actor) throw new SessionAccessError();
    const messageCount = readCount(row.message_count, 'message count', id);
    const lastPosition = row.last_position === null ? -1 : readCount(row.last_position, 'last position', id);
    if (lastPosition !== messageCount - 1) {
      throw corruptSession(
        id,
        `it counts ${messageCount} messages, but its last one is at position ${lastPosition}`,
      );
    }
    return {
      sequence: row.sequence ?? undefined,
      state: readState(row.state, id),
      messageCount,
      byteCount: readCount(row.byte_count, 'byte count', id),
      pause: row.pause ?? undefined,
    };
  };

  const context = {
    database,
    tables,
    leases,
    limits,
    isStoreClosed: () => isClosed,
    onRelease: (session: OpenedPostgresSession) => held.delete(session),
  };

  const open = async (request: SessionOpenRequest) => {
    throwIfClosed();
    const { id, actor, lockTimeoutMs, signal } = checkSessionOpenRequest(request);
    signal?.throwIfAborted();
    await prepare();
    await presence.ensure();
    // Refused before waiting, so a refused actor learns nothing of the lock.
    const owner = await ownerOf(id);
    if (owner !== undefined && owner !== actor) throw new SessionAccessError();
    const holder = randomUUID();
    await leases.acquire({ sessionId: id, holder, lockTimeoutMs, signal });
    try {
      throwIfClosed();
      // Read after taking the lock: another actor may have created the session meanwhile.
      const row = await readSessionRow(id, actor);
      const session = new OpenedPostgresSession(context, { id, actor, holder }, row);
      held.add(session);
      return session;
    } catch (error) {
      await leases.release(id, holder).catch(() => {});
      throw error;
    }
  };

  const list = async (request: SessionListRequest): Promise<SessionPage> => {
    throwIfClosed();
    const { actor, limit, after } = checkSessionListRequest(request);
    await prepare();
    const { rows } = await database.run(
      `SELECT sequence, id, message_count, byte_count, pause IS NOT NULL AS has_paused_run,
              (extract(epoch FROM created_at) * 1000)::float8 AS created_ms,
              (extract(epoch FROM updated_at) * 1000)::float8 AS updated_ms
       FROM ${tables.sessions}
       WHERE actor = $1 AND ($2::bigint IS NULL OR sequence < $2)
       ORDER BY sequence DESC
       LIMIT $3`,
      [actor, after ?? null, limit + 1],
      'listing sessions',
    );
    const page = rows.slice(0, limit).map((row) => {
      const id = row.id ?? '';
      return {
        sequence: readCount(row.sequence, 'number', id),
        summary: {
          id,
          actor,
          messageCount: readCount(row.message_count, 'message count', id),
          byteCount: readCount(row.byte_count, 'byte count', id),
          hasPausedRun: row.has_paused_run === 't',
          createdAt: readTime(row.created_ms, 'creation time', id),
          updatedAt: readTime(row.updated_ms, 'update time', id),
        },
      };
    });
    const last = page.at(-1);
    return {
      sessions: page.map((entry) => entry.summary),
      ...(rows.length > limit && last !== undefined ? { nextCursor: sessionListCursor(last.sequence) } : {}),
    };
  };

  const remove = async (request: {
    readonly id: string;
    readonly actor: string;
    readonly lockTimeoutMs?: number;
  }): Promise<boolean> => {
    throwIfClosed();
    const { id, actor, lockTimeoutMs } = checkSessionDeleteRequest(request);
    await prepare();
    if ((await ownerOf(id)) !== actor) return false;
    await presence.ensure();
    const holder = randomUUID();
    await leases.acquire({ sessionId: id, holder, lockTimeoutMs });
    try {
      return await database.transaction('deleting the session', id, async (statements) => {
        if (!(await leases.fence(statements, id, holder))) {
          throw new SessionBusyError(
            `Session '${id}' of store '${storeName}' was taken by another run before it could be deleted. Nothing was deleted; try again.`,
            { store: storeName, sessionId: id, reason: 'lock-lost' },
          );
        }
        const deleted = await statements.run(`DELETE FROM ${tables.sessions} WHERE id = $1 AND actor = $2`, [
          id,
          actor,
        ]);
        return deleted.rowCount > 0;
      });
    } finally {
      await leases.release(id, holder).catch(() => {});
    }
  };

  const prune = async (request: { readonly olderThan: Date }): Promise<number> => {
    throwIfClosed();
    const cutoff = checkSessionPruneRequest(request);
    await prepare();
    let pruned = 0;
    let after = '0';
    for (;;) {
      const { rows } = await database.run(
        `SELECT sequence, id FROM ${tables.sessions}
         WHERE updated_at < $1 AND sequence > $2 ORDER BY sequence LIMIT $3`,
        [cutoff, after, pruneBatch],
        'pruning sessions',
      );
      const last = rows.at(-1);
      if (last?.sequence === undefined || last.sequence === null) break;
      after = last.sequence;
      const ids = rows.map((row) => row.id);
      const holder = randomUUID();
      // Takes the lease of every candidate no run holds (a lease this transaction holds until it
      // ends), deletes those still older than the cutoff, and drops the leases, all at once.
      pruned += await database.transaction('pruning sessions', undefined, async (statements) => {
        const taken = await statements.run(
          `INSERT INTO ${tables.locks} AS held (session_id, holder, presence, expires_at)
           SELECT id, $2, NULL, now() + interval '1 minute' FROM unnest($1::text[]) AS candidate(id)
           ON CONFLICT (session_id) DO UPDATE
             SET holder = excluded.holder, presence = NULL, expires_at = excluded.expires_at
             WHERE held.expires_at <= now()
           RETURNING session_id`,
          [ids, holder],
        );
        const deleted = await statements.run(
          `DELETE FROM ${tables.sessions} WHERE id = ANY($1::text[]) AND updated_at < $2`,
          [taken.rows.map((row) => row.session_id), cutoff],
        );
        await statements.run(`DELETE FROM ${tables.locks} WHERE holder = $1`, [holder]);
        return deleted.rowCount;
      });
    }
    // Leases left by holders that died (expired), and before the cutoff, for sessions never written.
    await database.run(
      `DELETE FROM ${tables.locks} WHERE expires_at < least($1::timestamptz, now())`,
      [cutoff],
      'pruning sessions',
    );
    return pruned;
  };

  const closeStore = async () => {
    isClosed = true;
    for (const session of [...held]) await session.release();
    await presence.close();
    if (database.isPoolOwned) await database.pool.end().catch(() => {});
  };

  return defineSessionStore({
    kind: 'session-store' as const,
    specificationVersion: 'session-store-v1' as const,
    name: storeName,
    limits,
    open,
    list,
    delete: remove,
    prune,
    close: () => {
      closing ??= closeStore();
      return closing;
    },
  });
}
