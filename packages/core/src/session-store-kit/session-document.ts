import type { JsonObject } from '../json.js';
import { SessionConflictError } from '../session-errors.js';
import type {
  SessionLimits,
  SessionPage,
  SessionRecord,
  SessionSummary,
  SessionTurnOutcome,
  SessionWrite,
  SessionWriteResult,
} from '../session-store.js';
import { type CheckedSessionListRequest, sessionListCursor } from './session-list-request.js';
import { planSessionWrite } from './session-write-plan.js';

/** One stored message of a {@link SessionDocument}: JSON only, so the document can be stored as text. */
export interface SessionDocumentRecord {
  readonly position: number;
  readonly message: string;
  readonly operationId: string;
  readonly outcome?: SessionTurnOutcome;
  /** Milliseconds since the epoch. */
  readonly createdAt: number;
  /** UTF-8 bytes of `message`. */
  readonly bytes: number;
}

/**
 * A whole session as one JSON value: for stores that keep a session as one document (a file, a
 * key-value entry) and read and write it whole, under the session's lock. {@link applySessionWrite}
 * and {@link sessionDocumentHistory} do the contract's work on it.
 */
export interface SessionDocument {
  readonly id: string;
  readonly actor: string;
  /** The number `list` orders by (newest first) and its cursor holds: larger for later sessions. */
  readonly sequence: number;
  /** Milliseconds since the epoch. */
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly state: JsonObject;
  /** The paused run kept with the session (`SessionWrite.pause`), verbatim; absent when there is none. */
  readonly pause?: string;
  readonly records: readonly SessionDocumentRecord[];
  readonly byteCount: number;
  /** Each applied operation id, with the digest of what it wrote. */
  readonly operations: Readonly<Record<string, string>>;
}

/** What {@link applySessionWrite} returns: the new document to store, or nothing to store. */
export type SessionDocumentChange =
  | { readonly status: 'applied'; readonly document: SessionDocument; readonly result: SessionWriteResult }
  | { readonly status: 'already-applied'; readonly result: SessionWriteResult };

/**
 * Applies a write to a session document, as the contract says, without changing `document`: an
 * operation id applied before with the same digest is `already-applied`, with another digest a
 * `SessionConflictError`; a `replaceFrom` whose tail moved is a `SessionConflictError`; limits are
 * checked with `planSessionWrite`; `pause` is kept, removed (`null`) or left as it is (absent).
 * `create` describes the session when this write is its first. Call it under the session's lock,
 * then store `document` atomically.
 */
export function applySessionWrite(
  document: SessionDocument | undefined,
  create: { readonly id: string; readonly actor: string; readonly sequence: number },
  write: SessionWrite,
  limits: SessionLimits,
  now = Date.now(),
): SessionDocumentChange {
  const id = create.id;
  const records = document?.records ?? [];
  const totals = { messageCount: records.length, byteCount: document?.byteCount ?? 0 };
  const applied = document?.operations[write.operationId];
  if (applied === write.digest)
    return { status: 'already-applied', result: { status: 'already-applied', ...totals } };
  if (applied !== undefined) {
    throw new SessionConflictError(
      `Operation '${write.operationId}' was already applied to this session with other content, so this write was refused. Give each distinct write its own operation id.`,
      { reason: 'operation-reused', operationId: write.operationId, sessionId: id },
    );
  }
  const from = write.replaceFrom?.position ?? records.length;
  if (write.replaceFrom !== undefined) {
    const { expected } = write.replaceFrom;
    const isTail =
      Number.isSafeInteger(from) &&
      from >= 0 &&
      from + expected.length === records.length &&
      expected.every((message, index) => records[from + index]?.message === message);
    if (!isTail) {
      throw new SessionConflictError(
        'The messages replace() expected at the end of the history are no longer there, so nothing was changed. Read the history again and retry.',
        { reason: 'tail-moved', operationId: write.operationId, sessionId: id },
      );
    }
  }
  const removed = records.slice(from);
  const plan = planSessionWrite(
    limits,
    totals,
    {
      removedCount: removed.length,
      removedBytes: removed.reduce((sum, record) => sum + record.bytes, 0),
      messages: write.messages,
      state: write.state,
      pause: write.pause,
    },
    id,
  );
  const added = write.messages.map(
    (message, index): SessionDocumentRecord => ({
      position: from + index,
      message,
      operationId: write.operationId,
      ...(write.outcome === undefined ? {} : { outcome: write.outcome }),
      createdAt: now,
      bytes: plan.messageBytes[index] ?? 0,
    }),
  );
  const pause = write.pause === undefined ? document?.pause : (write.pause ?? undefined);
  const next: SessionDocument = {
    id,
    actor: document?.actor ?? create.actor,
    sequence: document?.sequence ?? create.sequence,
    createdAt: document?.createdAt ?? now,
    updatedAt: now,
    state:
      plan.stateText === undefined ? (document?.state ?? {}) : (JSON.parse(plan.stateText) as JsonObject),
    ...(pause === undefined ? {} : { pause }),
    records: [...records.slice(0, from), ...added],
    byteCount: plan.byteCount,
    operations: { ...document?.operations, [write.operationId]: write.digest },
  };
  return {
    status: 'applied',
    document: next,
    result: { status: 'applied', messageCount: plan.messageCount, byteCount: plan.byteCount },
  };
}

/** The records `history({ limit, before })` returns from a session document. */
export function sessionDocumentHistory(
  document: SessionDocument | undefined,
  request: { readonly limit: number; readonly before?: number },
): SessionRecord[] {
  const records = document?.records ?? [];
  const end = Math.min(request.before ?? records.length, records.length);
  return records.slice(Math.max(0, end - request.limit), end).map((record) => ({
    position: record.position,
    message: record.message,
    operationId: record.operationId,
    ...(record.outcome === undefined ? {} : { outcome: record.outcome }),
    createdAt: new Date(record.createdAt),
  }));
}

/** A session document as `list` shows it. */
function sessionDocumentSummary(document: SessionDocument): SessionSummary {
  return {
    id: document.id,
    actor: document.actor,
    messageCount: document.records.length,
    byteCount: document.byteCount,
    hasPausedRun: document.pause !== undefined,
    createdAt: new Date(document.createdAt),
    updatedAt: new Date(document.updatedAt),
  };
}

/**
 * A page of `list` from every stored document: the actor's sessions, newest first (by `sequence`),
 * after the cursor of a checked request (`checkSessionListRequest`), with the next cursor.
 */
export function sessionDocumentPage(
  documents: Iterable<SessionDocument>,
  request: CheckedSessionListRequest,
): SessionPage {
  const { actor, limit, after } = request;
  const owned: SessionDocument[] = [];
  for (const document of documents) {
    if (document.actor === actor && (after === undefined || document.sequence < after)) owned.push(document);
  }
  owned.sort((left, right) => right.sequence - left.sequence);
  const page = owned.slice(0, limit);
  const last = page.at(-1);
  return {
    sessions: page.map(sessionDocumentSummary),
    ...(owned.length > limit && last !== undefined ? { nextCursor: sessionListCursor(last.sequence) } : {}),
  };
}
