import type { JsonObject } from '@ghost/core';
import { type SessionRecord, SessionStoreError, type SessionTurnOutcome } from '@ghost/core/session-store';
import { storeName, type TextRow } from './postgres-database.js';

const outcomes = new Set<string>(['completed', 'partial', 'cancelled', 'failed']);

/** A `SessionStoreError` (`reason: 'corrupt'`) naming the session and what is wrong with its rows. */
export function corruptSession(sessionId: string, problem: string): SessionStoreError {
  return new SessionStoreError(
    `Session store '${storeName}' found session '${sessionId}' corrupt: ${problem}. Nothing was changed; delete the session, or repair its rows in the ghost_ tables.`,
    { store: storeName, reason: 'corrupt', sessionId },
  );
}

/** A count column: a whole number of 0 or more, else the session is corrupt. */
export function readCount(value: string | null | undefined, column: string, sessionId: string): number {
  const count = Number(value);
  if (value === null || value === undefined || !Number.isSafeInteger(count) || count < 0) {
    throw corruptSession(sessionId, `its ${column} is ${JSON.stringify(value)}`);
  }
  return count;
}

/** A time selected as milliseconds since the epoch. */
export function readTime(value: string | null | undefined, column: string, sessionId: string): Date {
  const time = new Date(Number(value));
  if (value === null || value === undefined || !Number.isFinite(time.getTime())) {
    throw corruptSession(sessionId, `its ${column} is ${JSON.stringify(value)}`);
  }
  return time;
}

/** The stored state: JSON text of an object. */
export function readState(value: string | null | undefined, sessionId: string): JsonObject {
  let state: unknown;
  try {
    state = JSON.parse(value ?? '');
  } catch (error) {
    throw corruptSession(sessionId, `its state is not JSON (${(error as Error).message})`);
  }
  if (typeof state !== 'object' || state === null || Array.isArray(state)) {
    throw corruptSession(sessionId, 'its state is not a JSON object');
  }
  return state as JsonObject;
}

/** One message row (position, message, operation id, outcome, time) as a record. */
export function readRecord(row: TextRow, sessionId: string): SessionRecord {
  const position = readCount(row.position, 'message position', sessionId);
  const { message, operation_id: operationId, outcome } = row;
  if (typeof message !== 'string') throw corruptSession(sessionId, `the message at ${position} is null`);
  if (typeof operationId !== 'string') {
    throw corruptSession(sessionId, `the message at ${position} has no operation id`);
  }
  if (outcome !== null && (outcome === undefined || !outcomes.has(outcome))) {
    throw corruptSession(sessionId, `the message at ${position} has outcome ${JSON.stringify(outcome)}`);
  }
  return {
    position,
    message,
    operationId,
    ...(outcome === null ? {} : { outcome: outcome as SessionTurnOutcome }),
    createdAt: readTime(row.created_ms, 'message time', sessionId),
  };
}
