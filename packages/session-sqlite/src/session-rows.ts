import type { JsonObject } from '@ghost/core';
import { type SessionRecord, SessionStoreError, type SessionTurnOutcome } from '@ghost/core/session-store';
import type { Row, Transaction } from '@libsql/client';

/** A `ghost_sessions` row, checked. */
export interface SessionRow {
  readonly sequence: number;
  readonly id: string;
  readonly actor: string;
  readonly stateText: string;
  readonly messageCount: number;
  readonly byteCount: number;
  /** Whether the row keeps a paused run (its text is read only when a session is opened). */
  readonly hasPausedRun: boolean;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** The columns {@link readSessionRow} reads, in a `SELECT` of `ghost_sessions`. */
export const sessionColumns =
  'sequence, id, actor, state, message_count, byte_count, pause IS NOT NULL AS has_paused_run, created_at, updated_at';

/** The columns {@link readMessageRow} reads, in a `SELECT` of `ghost_session_messages`. */
export const messageColumns = 'position, message, operation_id, outcome, created_at';

const outcomes: ReadonlySet<string> = new Set<SessionTurnOutcome>([
  'completed',
  'partial',
  'cancelled',
  'failed',
]);

/** Thrown for a row Ghost did not write as it is: names the session and what to do. */
export function corruptRow(sessionId: string, problem: string): SessionStoreError {
  return new SessionStoreError(
    `Session store 'sqlite' found session '${sessionId}' damaged: ${problem}. The row was changed outside Ghost; delete the session with store.delete(), or restore the file from a backup.`,
    { store: 'sqlite', reason: 'corrupt', sessionId },
  );
}

function count(row: Row, column: string, sessionId: string): number {
  const value = row[column];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw corruptRow(sessionId, `its ${column} is ${formatValue(value)}, not a whole number`);
  }
  return value;
}

function text(row: Row, column: string, sessionId: string): string {
  const value = row[column];
  if (typeof value !== 'string')
    throw corruptRow(sessionId, `its ${column} is ${formatValue(value)}, not text`);
  return value;
}

function formatValue(value: unknown): string {
  if (value === null) return 'empty';
  if (value instanceof ArrayBuffer) return 'bytes';
  return typeof value;
}

/** A session row, or a `SessionStoreError` (`corrupt`) saying which column is wrong. */
export function readSessionRow(row: Row, sessionId: string): SessionRow {
  return {
    sequence: count(row, 'sequence', sessionId),
    id: text(row, 'id', sessionId),
    actor: text(row, 'actor', sessionId),
    stateText: text(row, 'state', sessionId),
    messageCount: count(row, 'message_count', sessionId),
    byteCount: count(row, 'byte_count', sessionId),
    hasPausedRun: count(row, 'has_paused_run', sessionId) === 1,
    createdAt: count(row, 'created_at', sessionId),
    updatedAt: count(row, 'updated_at', sessionId),
  };
}

/** The state a session row holds: a JSON object, or a `SessionStoreError` (`corrupt`). */
export function readSessionState(session: SessionRow): JsonObject {
  let state: unknown;
  try {
    state = JSON.parse(session.stateText);
  } catch (error) {
    throw corruptRow(session.id, `its state is not JSON (${(error as Error).message})`);
  }
  if (typeof state !== 'object' || state === null || Array.isArray(state)) {
    throw corruptRow(session.id, 'its state is not a JSON object');
  }
  return state as JsonObject;
}

/** The paused run a session row keeps (`SessionWrite.pause`), or `undefined`; else `corrupt`. */
export async function readSessionPause(
  client: Pick<Transaction, 'execute'>,
  session: SessionRow,
): Promise<string | undefined> {
  if (!session.hasPausedRun) return undefined;
  const { rows } = await client.execute({
    sql: 'SELECT pause FROM ghost_sessions WHERE sequence = ?',
    args: [session.sequence],
  });
  const row = rows[0];
  if (row === undefined) throw corruptRow(session.id, 'its row went missing while it was read');
  return text(row, 'pause', session.id);
}

/** A message row as a `SessionRecord`, or a `SessionStoreError` (`corrupt`). */
export function readMessageRow(row: Row, sessionId: string): SessionRecord {
  const position = count(row, 'position', sessionId);
  const message = text(row, 'message', sessionId);
  const operationId = text(row, 'operation_id', sessionId);
  const outcome = row.outcome;
  if (outcome !== null && (typeof outcome !== 'string' || !outcomes.has(outcome))) {
    throw corruptRow(sessionId, `the message at position ${position} has an unknown outcome`);
  }
  return {
    position,
    message,
    operationId,
    ...(outcome === null ? {} : { outcome: outcome as SessionTurnOutcome }),
    createdAt: new Date(count(row, 'created_at', sessionId)),
  };
}
