import { SessionBusyError } from '@ghost/core';
import { type PostgresDatabase, type Statements, storeName } from './postgres-database.js';
import type { GhostTables } from './postgres-migrations.js';
import { presenceLockSpace, releaseChannel, type StorePresence } from './store-presence.js';

/** The first pause between two tries for a held session, and the longest. */
const firstPauseMs = 10;
const longestPauseMs = 500;

/** One caller waiting for a session: woken early by a release announced on the channel. */
interface Waiter {
  isNotified: boolean;
  wake: (() => void) | undefined;
}

/** What {@link SessionLeases.acquire} takes. */
export interface LeaseRequest {
  readonly sessionId: string;
  /** A token of this hold, new for each open: the fence every write checks. */
  readonly holder: string;
  readonly lockTimeoutMs: number;
  readonly signal?: AbortSignal | undefined;
}

/**
 * A session's lock as a lease row: who holds it (a token), the holding store's presence key, and when
 * it expires unless renewed. Another store takes it only when it has expired or when the holder's
 * presence lock is gone (its process died); every write checks the token inside its transaction.
 * See docs/decisions/2026-12-05-postgres-session-store.md.
 */
export class SessionLeases {
  readonly leaseMs: number;
  readonly #database: PostgresDatabase;
  readonly #tables: GhostTables;
  readonly #presence: StorePresence;
  readonly #waiters = new Map<string, Set<Waiter>>();

  constructor(database: PostgresDatabase, tables: GhostTables, presence: StorePresence, leaseMs: number) {
    this.#database = database;
    this.#tables = tables;
    this.#presence = presence;
    this.leaseMs = leaseMs;
  }

  /** Tries once: resolves whether this holder now holds the session. */
  async take(sessionId: string, holder: string): Promise<boolean> {
    const result = await this.#database.run(
      `INSERT INTO ${this.#tables.locks} AS held (session_id, holder, presence, expires_at)
       VALUES ($1, $2, $3, now() + $4 * interval '1 millisecond')
       ON CONFLICT (session_id) DO UPDATE
         SET holder = excluded.holder, presence = excluded.presence, expires_at = excluded.expires_at
         WHERE held.expires_at <= now()
            OR (held.presence IS NOT NULL AND NOT EXISTS (
              SELECT 1 FROM pg_catalog.pg_locks l
              WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
                AND l.database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database())
                AND l.classid = $5::oid AND l.objid = held.presence::oid))
       RETURNING holder`,
      [sessionId, holder, this.#presenceKey(), this.leaseMs, presenceLockSpace],
      'taking the session lock',
      sessionId,
    );
    return result.rowCount === 1;
  }

  /**
   * Takes the session's lease, waiting up to `lockTimeoutMs`: tries, then pauses (10 ms, doubling to
   * 500 ms, jittered) or until a release of this session is announced, and tries again. Rejects with
   * `SessionBusyError` (`reason: 'timeout'`), or with the signal's reason when it aborts.
   */
  async acquire(request: LeaseRequest): Promise<void> {
    const { sessionId, holder, lockTimeoutMs, signal } = request;
    const waiter: Waiter = { isNotified: false, wake: undefined };
    const waiters = this.#waiters.get(sessionId) ?? new Set();
    this.#waiters.set(sessionId, waiters);
    waiters.add(waiter);
    try {
      const startedAt = Date.now();
      let pauseMs = firstPauseMs;
      for (;;) {
        signal?.throwIfAborted();
        waiter.isNotified = false;
        if (await this.take(sessionId, holder)) {
          if (signal?.aborted) {
            await this.release(sessionId, holder);
            signal.throwIfAborted();
          }
          return;
        }
        const remainingMs = lockTimeoutMs - (Date.now() - startedAt);
        if (remainingMs <= 0) {
          throw new SessionBusyError(
            `Session '${sessionId}' of store '${storeName}' is held by another run, which did not release it within ${lockTimeoutMs} ms. Nothing was written; try again when that run has ended, or raise lockTimeoutMs.`,
            { store: storeName, sessionId, reason: 'timeout', lockTimeoutMs },
          );
        }
        await pause(waiter, Math.min(remainingMs, pauseMs * (0.5 + Math.random())), signal);
        pauseMs = Math.min(longestPauseMs, pauseMs * 2);
      }
    } finally {
      waiters.delete(waiter);
      if (waiters.size === 0) this.#waiters.delete(sessionId);
    }
  }

  /**
   * Extends the lease (recording the current presence key: a run holds on through a reconnection);
   * resolves `false` when this holder no longer holds it.
   */
  async renew(sessionId: string, holder: string): Promise<boolean> {
    await this.#presence.ensure();
    const result = await this.#database.run(
      `UPDATE ${this.#tables.locks} SET expires_at = now() + $3 * interval '1 millisecond', presence = $4
       WHERE session_id = $1 AND holder = $2`,
      [sessionId, holder, this.leaseMs, this.#presenceKey()],
      'renewing the session lock',
      sessionId,
    );
    return result.rowCount === 1;
  }

  /**
   * The fence, inside a write's transaction: extends the lease and resolves `true` when this holder
   * still holds it. The row stays locked until the transaction ends, so no one takes the lease
   * between this check and the commit.
   */
  async fence(statements: Statements, sessionId: string, holder: string): Promise<boolean> {
    const result = await statements.run(
      `UPDATE ${this.#tables.locks} SET expires_at = now() + $3 * interval '1 millisecond', presence = $4
       WHERE session_id = $1 AND holder = $2`,
      [sessionId, holder, this.leaseMs, this.#presenceKey()],
    );
    return result.rowCount === 1;
  }

  /** The key to record: `null` while the presence connection is down (the lease then only expires). */
  #presenceKey(): number | null {
    return this.#presence.isUp ? this.#presence.key : null;
  }

  /**
   * Records `presenceKey` in the leases these holders still hold: after the presence connection
   * was replaced, their leases show a live holder again.
   */
  async adopt(holders: readonly string[], presenceKey: number): Promise<void> {
    if (holders.length === 0) return;
    await this.#database.run(
      `UPDATE ${this.#tables.locks} SET presence = $1 WHERE holder = ANY($2::uuid[])`,
      [presenceKey, holders],
      'renewing the session locks',
    );
  }

  /** Gives the lease up and announces it, so waiters in every process try at once. */
  async release(sessionId: string, holder: string): Promise<void> {
    await this.#database.run(
      `WITH released AS (
         DELETE FROM ${this.#tables.locks} WHERE session_id = $1 AND holder = $2 RETURNING session_id
       )
       SELECT pg_notify($3, $4) FROM released`,
      [sessionId, holder, releaseChannel, `${this.#tables.schema}\n${sessionId}`],
      'releasing the session lock',
      sessionId,
    );
  }

  /** Wakes this store's waiters for the session a release announcement names. */
  wake(payload: string): void {
    const newline = payload.indexOf('\n');
    if (newline < 0 || payload.slice(0, newline) !== this.#tables.schema) return;
    for (const waiter of this.#waiters.get(payload.slice(newline + 1)) ?? []) {
      waiter.isNotified = true;
      waiter.wake?.();
    }
  }
}

/** Waits `ms`, or less when the waiter is woken; rejects with the signal's reason on abort. */
function pause(waiter: Waiter, ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (waiter.isNotified) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const settle = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      waiter.wake = undefined;
    };
    const onAbort = () => {
      settle();
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      settle();
      resolve();
    }, ms);
    waiter.wake = () => {
      settle();
      resolve();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
