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
import {
  OpenedPostgresSession,
  type OpenedSessionContext,
  type OpenedSessionRow,
} from './opened-postgres-session.js';
import { PostgresDatabase, storeName, type TextRow } from './postgres-database.js';
import { type GhostTables, ghostTables, migrateGhostTables } from './postgres-migrations.js';
import {
  type CheckedPostgresStoreOptions,
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
  const store = new PostgresSessionStore(database, checked, limits);
  return defineSessionStore({
    kind: 'session-store' as const,
    specificationVersion: 'session-store-v1' as const,
    name: storeName,
    limits,
    open: (request: SessionOpenRequest) => store.open(request),
    list: (request: SessionListRequest) => store.list(request),
    delete: (request: SessionDeleteRequest) => store.delete(request),
    prune: (request: SessionPruneRequest) => store.prune(request),
    close: () => store.close(),
  });
}

type SessionDeleteRequest = Parameters<SessionStoreV1['delete']>[0];
type SessionPruneRequest = Parameters<SessionStoreV1['prune']>[0];

/** The state of one {@link postgresSessionStore} and its operations, one method each. */
class PostgresSessionStore {
  readonly #database: PostgresDatabase;
  readonly #tables: GhostTables;
  readonly #held = new Set<OpenedPostgresSession>();
  readonly #presence: StorePresence;
  readonly #leases: SessionLeases;
  readonly #openedContext: OpenedSessionContext;
  #ready: Promise<void> | undefined;
  #isClosed = false;
  #closing: Promise<void> | undefined;

  constructor(database: PostgresDatabase, checked: CheckedPostgresStoreOptions, limits: SessionLimits) {
    this.#database = database;
    this.#tables = ghostTables(checked.schema);
    this.#presence = new StorePresence(database, {
      onRelease: (payload) => this.#leases.wake(payload),
      onConnected: (key): Promise<void> =>
        this.#leases.adopt(
          [...this.#held].map((session) => session.holder),
          key,
        ),
    });
    this.#leases = new SessionLeases(database, this.#tables, this.#presence, checked.leaseMs);
    this.#openedContext = {
      database,
      tables: this.#tables,
      leases: this.#leases,
      limits,
      isStoreClosed: () => this.#isClosed,
      onRelease: (session: OpenedPostgresSession) => this.#held.delete(session),
    };
  }

  async open(request: SessionOpenRequest): Promise<OpenedPostgresSession> {
    this.#throwIfClosed();
    const { id, actor, lockTimeoutMs, signal } = checkSessionOpenRequest(request);
    signal?.throwIfAborted();
    await this.#prepare();
    await this.#presence.ensure();
    // Refused before waiting, so a refused actor learns nothing of the lock.
    const owner = await this.#ownerOf(id);
    if (owner !== undefined && owner !== actor) throw new SessionAccessError();
    const holder = randomUUID();
    await this.#leases.acquire({ sessionId: id, holder, lockTimeoutMs, signal });
    try {
      this.#throwIfClosed();
      // Read after taking the lock: another actor may have created the session meanwhile.
      const row = await this.#readSessionRow(id, actor);
      const session = new OpenedPostgresSession(this.#openedContext, { id, actor, holder }, row);
      this.#held.add(session);
      return session;
    } catch (error) {
      await this.#leases.release(id, holder).catch(() => {});
      throw error;
    }
  }

  async list(request: SessionListRequest): Promise<SessionPage> {
    this.#throwIfClosed();
    const { actor, limit, after } = checkSessionListRequest(request);
    await this.#prepare();
    const { rows } = await this.#database.run(
      `SELECT sequence, id, message_count, byte_count, pause IS NOT NULL AS has_paused_run,
              (extract(epoch FROM created_at) * 1000)::float8 AS created_ms,
              (extract(epoch FROM updated_at) * 1000)::float8 AS updated_ms
       FROM ${this.#tables.sessions}
       WHERE actor = $1 AND ($2::bigint IS NULL OR sequence < $2)
       ORDER BY sequence DESC
       LIMIT $3`,
      [actor, after ?? null, limit + 1],
      'listing sessions',
    );
    return sessionPage(rows, actor, limit);
  }

  async delete(request: SessionDeleteRequest): Promise<boolean> {
    this.#throwIfClosed();
    const { id, actor, lockTimeoutMs } = checkSessionDeleteRequest(request);
    await this.#prepare();
    if ((await this.#ownerOf(id)) !== actor) return false;
    await this.#presence.ensure();
    const holder = randomUUID();
    await this.#leases.acquire({ sessionId: id, holder, lockTimeoutMs });
    try {
      return await this.#database.transaction('deleting the session', id, async (statements) => {
        if (!(await this.#leases.fence(statements, id, holder))) {
          throw new SessionBusyError(
            `Session '${id}' of store '${storeName}' was taken by another run before it could be deleted. Nothing was deleted; try again.`,
            { store: storeName, sessionId: id, reason: 'lock-lost' },
          );
        }
        const deleted = await statements.run(
          `DELETE FROM ${this.#tables.sessions} WHERE id = $1 AND actor = $2`,
          [id, actor],
        );
        return deleted.rowCount > 0;
      });
    } finally {
      await this.#leases.release(id, holder).catch(() => {});
    }
  }

  async prune(request: SessionPruneRequest): Promise<number> {
    this.#throwIfClosed();
    const cutoff = checkSessionPruneRequest(request);
    await this.#prepare();
    let pruned = 0;
    let after = '0';
    for (;;) {
      const { rows } = await this.#database.run(
        `SELECT sequence, id FROM ${this.#tables.sessions}
         WHERE updated_at < $1 AND sequence > $2 ORDER BY sequence LIMIT $3`,
        [cutoff, after, pruneBatch],
        'pruning sessions',
      );
      const last = rows.at(-1);
      if (last?.sequence === undefined || last.sequence === null) break;
      after = last.sequence;
      pruned += await this.#pruneUnheld(
        rows.map((row) => row.id),
        cutoff,
      );
    }
    // Leases left by holders that died (expired), and before the cutoff, for sessions never written.
    await this.#database.run(
      `DELETE FROM ${this.#tables.locks} WHERE expires_at < least($1::timestamptz, now())`,
      [cutoff],
      'pruning sessions',
    );
    return pruned;
  }

  close(): Promise<void> {
    this.#closing ??= this.#closeNow();
    return this.#closing;
  }

  async #closeNow(): Promise<void> {
    this.#isClosed = true;
    for (const session of [...this.#held]) await session.release();
    await this.#presence.close();
    if (this.#database.isPoolOwned) await this.#database.pool.end().catch(() => {});
  }

  #throwIfClosed(): void {
    if (this.#isClosed) {
      throw new SessionStoreError(
        `Session store '${storeName}' is closed; create a new one with postgresSessionStore().`,
        { store: storeName, reason: 'closed' },
      );
    }
  }

  /** Migrates once per store; a failure (the server down, a newer schema) is tried again next call. */
  #prepare(): Promise<void> {
    this.#ready ??= migrateGhostTables(this.#database, this.#tables).catch((error: unknown) => {
      this.#ready = undefined;
      throw error;
    });
    return this.#ready;
  }

  async #ownerOf(id: string): Promise<string | undefined> {
    const { rows } = await this.#database.run(
      `SELECT actor FROM ${this.#tables.sessions} WHERE id = $1`,
      [id],
      'reading the session',
      id,
    );
    return rows[0]?.actor ?? undefined;
  }

  async #readSessionRow(id: string, actor: string): Promise<OpenedSessionRow> {
    const { rows } = await this.#database.run(
      `SELECT s.sequence, s.actor, s.state, s.message_count, s.byte_count, s.pause,
              (SELECT m.position FROM ${this.#tables.messages} m
               WHERE m.session_sequence = s.sequence ORDER BY m.position DESC LIMIT 1) AS last_position
       FROM ${this.#tables.sessions} s WHERE s.id = $1`,
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
  }

  /**
   * Takes the lease of every candidate no run holds (a lease this transaction holds until it
   * ends), deletes those still older than the cutoff, and drops the leases, all at once.
   */
  #pruneUnheld(ids: readonly (string | null | undefined)[], cutoff: Date): Promise<number> {
    const holder = randomUUID();
    return this.#database.transaction('pruning sessions', undefined, async (statements) => {
      const taken = await statements.run(
        `INSERT INTO ${this.#tables.locks} AS held (session_id, holder, presence, expires_at)
         SELECT id, $2, NULL, now() + interval '1 minute' FROM unnest($1::text[]) AS candidate(id)
         ON CONFLICT (session_id) DO UPDATE
           SET holder = excluded.holder, presence = NULL, expires_at = excluded.expires_at
           WHERE held.expires_at <= now()
         RETURNING session_id`,
        [ids, holder],
      );
      const deleted = await statements.run(
        `DELETE FROM ${this.#tables.sessions} WHERE id = ANY($1::text[]) AND updated_at < $2`,
        [taken.rows.map((row) => row.session_id), cutoff],
      );
      await statements.run(`DELETE FROM ${this.#tables.locks} WHERE holder = $1`, [holder]);
      return deleted.rowCount;
    });
  }
}

/** One page of `list` from its rows, read one past `limit` to know whether another page follows. */
function sessionPage(rows: readonly TextRow[], actor: string, limit: number): SessionPage {
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
}
