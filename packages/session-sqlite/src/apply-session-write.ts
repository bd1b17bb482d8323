import {
  planSessionWrite,
  SessionBusyError,
  SessionConflictError,
  type SessionLimits,
  type SessionWrite,
  type SessionWritePlan,
  type SessionWriteResult,
} from '@ghost/core/session-store';
import type { Transaction } from '@libsql/client';
import { renewLease } from './session-lease.js';
import { corruptRow, readSessionRow, type SessionRow, sessionColumns } from './session-rows.js';

/** Who writes, and to what: the session held by `owner`. */
export interface SessionWriter {
  readonly sessionId: string;
  readonly actor: string;
  /** The lease token of the open that writes. */
  readonly owner: string;
  readonly limits: SessionLimits;
  readonly leaseMs: number;
}

/** What a write did, and the session row's number (a new session gets one with its first write). */
export interface AppliedSessionWrite extends SessionWriteResult {
  readonly sequence: number | undefined;
}

/** The session row of `sessionId`, with its message count checked against its last position. */
export async function readCheckedSession(
  transaction: Pick<Transaction, 'execute'>,
  sessionId: string,
): Promise<SessionRow | undefined> {
  const { rows } = await transaction.execute({
    sql: `SELECT ${sessionColumns} FROM ghost_sessions WHERE id = ?`,
    args: [sessionId],
  });
  const row = rows[0];
  if (row === undefined) return undefined;
  const session = readSessionRow(row, sessionId);
  const last = await transaction.execute({
    sql: 'SELECT MAX(position) AS last FROM ghost_session_messages WHERE session = ?',
    args: [session.sequence],
  });
  const lastPosition = last.rows[0]?.last;
  const stored = typeof lastPosition === 'number' ? lastPosition + 1 : 0;
  if (stored !== session.messageCount) {
    throw corruptRow(
      sessionId,
      `it counts ${session.messageCount} messages but its last message is at position ${stored - 1}`,
    );
  }
  return session;
}

/**
 * Applies one write inside a write transaction, or throws and the transaction rolls back: checks
 * that `owner` still holds the lease (fencing: else `SessionBusyError`, `reason: 'lock-lost'`), the
 * operation id, the expected tail and the limits, then writes and extends the lease.
 */
export async function applySessionWrite(
  transaction: Transaction,
  writer: SessionWriter,
  write: SessionWrite,
): Promise<AppliedSessionWrite> {
  const { sessionId, owner } = writer;
  const now = Date.now();
  await refuseLostLease(transaction, sessionId, owner);
  const session = await readCheckedSession(transaction, sessionId);
  const current = { messageCount: session?.messageCount ?? 0, byteCount: session?.byteCount ?? 0 };
  if (session !== undefined && (await isAlreadyApplied(transaction, session.sequence, write, sessionId))) {
    return { status: 'already-applied', ...current, sequence: session.sequence };
  }
  const from = write.replaceFrom?.position ?? current.messageCount;
  const removed = await replacedTail(transaction, session, write, current.messageCount, sessionId);
  const plan = planSessionWrite(
    writer.limits,
    current,
    {
      removedCount: removed.count,
      removedBytes: removed.bytes,
      messages: write.messages,
      state: write.state,
      pause: write.pause,
    },
    sessionId,
  );
  const sequence = session?.sequence ?? (await createSession(transaction, writer, now));
  await storeWrite(transaction, { sequence, from, removedCount: removed.count, write, plan, now });
  await renewLease(transaction, sessionId, owner, now + writer.leaseMs);
  return { status: 'applied', messageCount: plan.messageCount, byteCount: plan.byteCount, sequence };
}

/** Throws `SessionBusyError` (`reason: 'lock-lost'`) unless `owner` holds the lease of `sessionId`. */
async function refuseLostLease(transaction: Transaction, sessionId: string, owner: string): Promise<void> {
  const holder = await transaction.execute({
    sql: 'SELECT owner FROM ghost_session_leases WHERE session_id = ?',
    args: [sessionId],
  });
  if (holder.rows[0]?.owner !== owner) {
    throw new SessionBusyError(
      `This run no longer holds session '${sessionId}' of store 'sqlite' (its lease expired and another run took it, or the session was released or deleted), so nothing was written.`,
      { store: 'sqlite', sessionId, reason: 'lock-lost' },
    );
  }
}

/**
 * Whether the session already applied `write`'s operation id; `SessionConflictError`
 * (`reason: 'operation-reused'`) when it applied that id with other content.
 */
async function isAlreadyApplied(
  transaction: Transaction,
  sequence: number,
  write: SessionWrite,
  sessionId: string,
): Promise<boolean> {
  const applied = await transaction.execute({
    sql: 'SELECT digest FROM ghost_session_operations WHERE session = ? AND operation_id = ?',
    args: [sequence, write.operationId],
  });
  const digest = applied.rows[0]?.digest;
  if (digest === undefined) return false;
  if (digest !== write.digest) {
    throw new SessionConflictError(
      `Operation '${write.operationId}' was already applied to this session with other content, so this write was refused. Give each distinct write its own operation id.`,
      { reason: 'operation-reused', operationId: write.operationId, sessionId },
    );
  }
  return true;
}

/**
 * The stored messages `write.replaceFrom` replaces, counted and measured, after checking they are
 * exactly the tail it expects (else `SessionConflictError`, `reason: 'tail-moved'`).
 */
async function replacedTail(
  transaction: Transaction,
  session: SessionRow | undefined,
  write: SessionWrite,
  messageCount: number,
  sessionId: string,
): Promise<{ readonly count: number; readonly bytes: number }> {
  if (write.replaceFrom === undefined) return { count: 0, bytes: 0 };
  const { position: from, expected } = write.replaceFrom;
  const tailMoved = () =>
    new SessionConflictError(
      'The messages replace() expected at the end of the history are no longer there, so nothing was changed. Read the history again and retry.',
      { reason: 'tail-moved', operationId: write.operationId, sessionId },
    );
  if (!Number.isSafeInteger(from) || from < 0 || from + expected.length !== messageCount) {
    throw tailMoved();
  }
  if (session === undefined || expected.length === 0) return { count: 0, bytes: 0 };
  const tail = await transaction.execute({
    sql: 'SELECT message, bytes FROM ghost_session_messages WHERE session = ? AND position >= ? ORDER BY position',
    args: [session.sequence, from],
  });
  if (tail.rows.length !== expected.length) throw tailMoved();
  let bytes = 0;
  for (const [index, row] of tail.rows.entries()) {
    if (row.message !== expected[index]) throw tailMoved();
    const rowBytes = row.bytes;
    if (typeof rowBytes !== 'number' || !Number.isSafeInteger(rowBytes) || rowBytes < 0) {
      throw corruptRow(sessionId, `the message at position ${from + index} has no byte count`);
    }
    bytes += rowBytes;
  }
  return { count: expected.length, bytes };
}

/** Creates the row of a session written for the first time; resolves its number. */
async function createSession(transaction: Transaction, writer: SessionWriter, now: number): Promise<number> {
  const created = await transaction.execute({
    sql: `INSERT INTO ghost_sessions (id, actor, state, message_count, byte_count, created_at, updated_at)
      VALUES (?, ?, '{}', 0, 0, ?, ?) RETURNING sequence`,
    args: [writer.sessionId, writer.actor, now, now],
  });
  return Number(created.rows[0]?.sequence);
}

/** Writes a checked write: the replaced tail out, the messages in, the operation id, the session row. */
async function storeWrite(
  transaction: Transaction,
  {
    sequence,
    from,
    removedCount,
    write,
    plan,
    now,
  }: {
    readonly sequence: number;
    readonly from: number;
    readonly removedCount: number;
    readonly write: SessionWrite;
    readonly plan: SessionWritePlan;
    readonly now: number;
  },
): Promise<void> {
  if (removedCount > 0) {
    await transaction.execute({
      sql: 'DELETE FROM ghost_session_messages WHERE session = ? AND position >= ?',
      args: [sequence, from],
    });
  }
  for (const [index, message] of write.messages.entries()) {
    await transaction.execute({
      sql: `INSERT INTO ghost_session_messages (session, position, message, bytes, operation_id, outcome, created_at)
        VALUES (?, ?, ?, ?, ?, ?, ?)`,
      args: [
        sequence,
        from + index,
        message,
        plan.messageBytes[index] ?? 0,
        write.operationId,
        write.outcome ?? null,
        now,
      ],
    });
  }
  await transaction.execute({
    sql: 'INSERT INTO ghost_session_operations (session, operation_id, digest) VALUES (?, ?, ?)',
    args: [sequence, write.operationId, write.digest],
  });
  await transaction.execute({
    sql: `UPDATE ghost_sessions SET message_count = ?, byte_count = ?, state = coalesce(?, state),
      pause = CASE WHEN ? THEN ? ELSE pause END, updated_at = ?
      WHERE sequence = ?`,
    args: [
      plan.messageCount,
      plan.byteCount,
      plan.stateText ?? null,
      write.pause === undefined ? 0 : 1, // absent leaves the paused run; null removes it
      write.pause ?? null,
      now,
      sequence,
    ],
  });
}
