import { randomUUID } from 'node:crypto';
import {
  checkSessionDeleteRequest,
  checkSessionListRequest,
  checkSessionOpenRequest,
  checkSessionPruneRequest,
  defineSessionStore,
  type OpenedSessionV1,
  SessionAccessError,
  type SessionListRequest,
  type SessionOpenRequest,
  type SessionPage,
  type SessionStoreV1,
  sessionListCursor,
  waitForSessionLock,
} from '@ghost/core/session-store';
import type { Row } from '@libsql/client';
import { readCheckedSession, type SessionWriter } from './apply-session-write.js';
import { dropLease, isLeaseLive, readLease, takeLease } from './session-lease.js';
import { listQuery } from './session-queries.js';
import { readSessionPause, readSessionRow, readSessionState, type SessionRow } from './session-rows.js';
import { SqliteConnection } from './sqlite-connection.js';
import { SqliteOpenedSession } from './sqlite-opened-session.js';
import {
  type CheckedSqliteSessionStoreOptions,
  checkSqliteSessionStoreOptions,
  type SqliteSessionStoreOptions,
} from './sqlite-session-store-options.js';

/** How many sessions one transaction of `prune` looks at, so it never holds the file's write lock long. */
const pruneBatch = 100;

type LeaseAttempt =
  | { readonly status: 'taken'; readonly row: SessionRow | undefined; readonly pause: string | undefined }
  | { readonly status: 'held' }
  /** Another actor owns the id (`open` refuses it; `delete` finds nothing of its actor's). */
  | { readonly status: 'refused' }
  /** No session has the id (`delete` finds nothing; `open` takes the lease instead). */
  | { readonly status: 'missing' };

/**
 * The embedded session store: sessions in one SQLite file (through `@libsql/client`, a prebuilt
 * binary), shared by every process that opens the same file. A run holds its session with a lease
 * row (renewed while it runs; taken over at once when its process on this machine is gone, else
 * when it expires), and every write checks in its transaction that the run still holds it.
 *
 * @example
 * ```ts
 * import { createRuntime, defineAgent } from '@ghost/core';
 * import { sqliteSessionStore } from '@ghost/session-sqlite';
 *
 * const sessionStore = sqliteSessionStore({ path: './data/sessions.db' });
 * const runtime = createRuntime({ sessionStore });
 * const session = { id: chatId, actor: userId };
 * await agent.ask('Hi, I am Ada.', { runtime, session });
 * const run = await agent.ask('What is my name?', { runtime, session }); // the model sees both turns
 * await sessionStore.close();
 * ```
 */
export function sqliteSessionStore(options: SqliteSessionStoreOptions): SessionStoreV1 {
  const checked = checkSqliteSessionStoreOptions(options);
  const store = new SqliteSessionStore(checked);
  return defineSessionStore({
    kind: 'session-store' as const,
    specificationVersion: 'session-store-v1' as const,
    name: 'sqlite',
    limits: checked.limits,
    open: (request: SessionOpenRequest) => store.open(request),
    list: (request: SessionListRequest) => store.list(request),
    delete: (request: SessionDeleteRequest) => store.delete(request),
    prune: (request: SessionPruneRequest) => store.prune(request),
    close: () => store.close(),
  });
}

type SessionDeleteRequest = Parameters<SessionStoreV1['delete']>[0];
type SessionPruneRequest = Parameters<SessionStoreV1['prune']>[0];
type SqliteTransaction = Parameters<typeof readCheckedSession>[0];

/** The state of one {@link sqliteSessionStore} and its operations, one method each. */
class SqliteSessionStore {
  readonly #limits: CheckedSqliteSessionStoreOptions['limits'];
  readonly #leaseMs: number;
  readonly #connection: SqliteConnection;
  readonly #openSessions = new Set<SqliteOpenedSession>();
  #closing: Promise<void> | undefined;

  constructor({ path, limits, leaseMs, busyTimeoutMs }: CheckedSqliteSessionStoreOptions) {
    this.#limits = limits;
    this.#leaseMs = leaseMs;
    this.#connection = new SqliteConnection(path, busyTimeoutMs);
  }

  async open(request: SessionOpenRequest): Promise<OpenedSessionV1> {
    this.#throwIfClosed();
    const { id, actor, lockTimeoutMs, signal } = checkSessionOpenRequest(request);
    signal?.throwIfAborted();
    const owner = randomUUID();
    let row: SessionRow | undefined;
    let pause: string | undefined;
    await waitForSessionLock({
      tryAcquire: async () => {
        const attempt = await this.#tryTakeLease(id, actor, owner, 'open');
        if (attempt.status === 'refused') throw new SessionAccessError();
        if (attempt.status !== 'taken') return false;
        row = attempt.row;
        pause = attempt.pause;
        return true;
      },
      lockTimeoutMs,
      signal,
      store: 'sqlite',
      sessionId: id,
    });
    if (this.#closing !== undefined) {
      // Closed while this open waited: hand the lease back rather than hold it past the close.
      await this.#connection.write((transaction) => dropLease(transaction, id, owner)).catch(() => undefined);
      throw this.#connection.closedError();
    }
    const writer: SessionWriter = {
      sessionId: id,
      actor,
      owner,
      limits: this.#limits,
      leaseMs: this.#leaseMs,
    };
    const session = new SqliteOpenedSession({
      connection: this.#connection,
      writer,
      row,
      state: row === undefined ? {} : readSessionState(row),
      pause,
      throwIfStoreClosed: () => this.#throwIfClosed(),
      onRelease: (released) => this.#openSessions.delete(released),
    });
    this.#openSessions.add(session);
    return session;
  }

  async list(request: SessionListRequest): Promise<SessionPage> {
    this.#throwIfClosed();
    const { actor, limit, after } = checkSessionListRequest(request);
    const { rows } = await this.#connection.read((client) =>
      client.execute({
        sql: listQuery,
        args: [actor, after ?? Number.MAX_SAFE_INTEGER, limit + 1],
      }),
    );
    return sessionPage(rows, limit);
  }

  async delete(request: SessionDeleteRequest): Promise<boolean> {
    this.#throwIfClosed();
    const { id, actor, lockTimeoutMs } = checkSessionDeleteRequest(request);
    const owner = randomUUID();
    let isOwned = false;
    await waitForSessionLock({
      tryAcquire: async () => {
        const attempt = await this.#tryTakeLease(id, actor, owner, 'delete');
        isOwned = attempt.status === 'taken';
        return attempt.status !== 'held';
      },
      lockTimeoutMs,
      store: 'sqlite',
      sessionId: id,
    });
    if (!isOwned) return false;
    try {
      return await this.#connection.write((transaction) =>
        deleteLeasedSession(transaction, id, actor, owner),
      );
    } catch (error) {
      await this.#connection.write((transaction) => dropLease(transaction, id, owner)).catch(() => undefined);
      throw error;
    }
  }

  async prune({ olderThan }: SessionPruneRequest): Promise<number> {
    this.#throwIfClosed();
    const cutoff = checkSessionPruneRequest({ olderThan }).getTime();
    let pruned = 0;
    let after = 0;
    for (;;) {
      const batch = await this.#connection.write((transaction) =>
        pruneBatchAfter(transaction, cutoff, after),
      );
      pruned += batch.deleted;
      after = batch.last;
      if (batch.seen < pruneBatch) break;
    }
    // Leases that ended without a release (a crashed run's) are taken over when needed; drop them here.
    await this.#connection.write((transaction) =>
      transaction.execute({
        sql: 'DELETE FROM ghost_session_leases WHERE expires_at <= ?',
        args: [Date.now()],
      }),
    );
    return pruned;
  }

  close(): Promise<void> {
    this.#closing ??= this.#closeNow();
    return this.#closing;
  }

  async #closeNow(): Promise<void> {
    const held = [...this.#openSessions];
    for (const session of held) await session.release().catch(() => undefined);
    await this.#connection.close();
  }

  #throwIfClosed(): void {
    if (this.#closing !== undefined) throw this.#connection.closedError();
  }

  /**
   * One attempt at the lease of `sessionId`: a read first (no write lock while another run holds
   * it), then, when it looks free, a write transaction that checks again and takes it.
   */
  async #tryTakeLease(
    sessionId: string,
    actor: string,
    owner: string,
    purpose: 'open' | 'delete',
  ): Promise<LeaseAttempt> {
    const look = (session: { readonly actor: string } | undefined): LeaseAttempt | undefined => {
      if (session === undefined) return purpose === 'delete' ? { status: 'missing' } : undefined;
      return session.actor === actor ? undefined : { status: 'refused' };
    };
    const glance = await this.#connection.read(async (client) => {
      const { rows } = await client.execute({
        sql: 'SELECT actor FROM ghost_sessions WHERE id = ?',
        args: [sessionId],
      });
      const decided = look(ownerRow(rows[0]));
      if (decided !== undefined) return decided;
      const lease = await readLease(client, sessionId);
      return lease !== undefined && isLeaseLive(lease, Date.now())
        ? ({ status: 'held' } as const)
        : undefined;
    });
    if (glance !== undefined) return glance;
    return this.#connection.write(async (transaction): Promise<LeaseAttempt> => {
      // A damaged session can still be deleted: delete reads its owner only.
      const row = purpose === 'open' ? await readCheckedSession(transaction, sessionId) : undefined;
      const decided = look(purpose === 'open' ? row : await ownerOf(transaction, sessionId));
      if (decided !== undefined) return decided;
      const now = Date.now();
      const lease = await readLease(transaction, sessionId);
      if (lease !== undefined && isLeaseLive(lease, now)) return { status: 'held' };
      if (purpose === 'open' && row !== undefined) readSessionState(row); // refuse a damaged state before holding it
      const pause = row === undefined ? undefined : await readSessionPause(transaction, row);
      await takeLease(transaction, sessionId, owner, now + this.#leaseMs);
      return { status: 'taken', row, pause };
    });
  }
}

/** One page of `list` from its rows, read one past `limit` to know whether another page follows. */
function sessionPage(rows: readonly Row[], limit: number): SessionPage {
  const sessions = rows.slice(0, limit).map((row) => readSessionRow(row, String(row.id)));
  const last = sessions.at(-1);
  return {
    sessions: sessions.map((session) => ({
      id: session.id,
      actor: session.actor,
      messageCount: session.messageCount,
      byteCount: session.byteCount,
      hasPausedRun: session.hasPausedRun,
      createdAt: new Date(session.createdAt),
      updatedAt: new Date(session.updatedAt),
    })),
    ...(rows.length > limit && last !== undefined ? { nextCursor: sessionListCursor(last.sequence) } : {}),
  };
}

/**
 * Deletes session `id` of `actor` and drops the lease `owner` holds on it, if `owner` still holds
 * it; resolves whether a session was deleted.
 */
async function deleteLeasedSession(
  transaction: SqliteTransaction,
  id: string,
  actor: string,
  owner: string,
): Promise<boolean> {
  const lease = await readLease(transaction, id);
  if (lease?.owner !== owner) return false; // taken over meanwhile: another run has it now
  const { rows } = await transaction.execute({
    sql: 'SELECT sequence FROM ghost_sessions WHERE id = ? AND actor = ?',
    args: [id, actor],
  });
  const sequence = rows[0]?.sequence;
  if (typeof sequence === 'number') await deleteSessionRows(transaction, sequence);
  await dropLease(transaction, id, owner);
  return typeof sequence === 'number';
}

/**
 * Deletes the sessions no run holds among the next {@link pruneBatch} (by sequence, after `after`)
 * last written before `cutoff`.
 */
async function pruneBatchAfter(
  transaction: SqliteTransaction,
  cutoff: number,
  after: number,
): Promise<{ readonly seen: number; readonly last: number; readonly deleted: number }> {
  const { rows } = await transaction.execute({
    sql: `SELECT sequence, id FROM ghost_sessions WHERE updated_at < ? AND sequence > ? ORDER BY sequence LIMIT ?`,
    args: [cutoff, after, pruneBatch],
  });
  const now = Date.now();
  let deleted = 0;
  for (const row of rows) {
    const sessionId = String(row.id);
    const lease = await readLease(transaction, sessionId);
    if (lease !== undefined && isLeaseLive(lease, now)) continue; // a run holds it
    await deleteSessionRows(transaction, Number(row.sequence));
    await transaction.execute({
      sql: 'DELETE FROM ghost_session_leases WHERE session_id = ?',
      args: [sessionId],
    });
    deleted += 1;
  }
  return { seen: rows.length, last: Number(rows.at(-1)?.sequence ?? after), deleted };
}

/** The actor of session `sessionId` read without checking the rest of its row. */
async function ownerOf(
  transaction: SqliteTransaction,
  sessionId: string,
): Promise<{ readonly actor: string } | undefined> {
  const { rows } = await transaction.execute({
    sql: 'SELECT actor FROM ghost_sessions WHERE id = ?',
    args: [sessionId],
  });
  return ownerRow(rows[0]);
}

function ownerRow(row: Row | undefined): { readonly actor: string } | undefined {
  return row === undefined ? undefined : { actor: String(row.actor) };
}

async function deleteSessionRows(transaction: SqliteTransaction, sequence: number): Promise<void> {
  for (const sql of [
    'DELETE FROM ghost_session_messages WHERE session = ?',
    'DELETE FROM ghost_session_operations WHERE session = ?',
    'DELETE FROM ghost_sessions WHERE sequence = ?',
  ]) {
    await transaction.execute({ sql, args: [sequence] });
  }
}
