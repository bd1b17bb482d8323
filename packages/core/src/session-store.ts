import type { JsonObject } from './json.js';

/**
 * How much one session may hold. A write that would pass a limit is refused before anything is
 * written, with a `SessionLimitError` naming the limit and the size.
 */
export interface SessionLimits {
  /** Messages in one session. Default 10,000. */
  readonly maxMessages: number;
  /** UTF-8 bytes of one stored message (its JSON text). Default 16 MiB. */
  readonly maxMessageBytes: number;
  /** UTF-8 bytes of all of one session's messages together. Default 128 MiB. */
  readonly maxSessionBytes: number;
  /** UTF-8 bytes of a session's state (its JSON text). Default 1 MiB. */
  readonly maxStateBytes: number;
  /** UTF-8 bytes of a paused run's text (`SessionWrite.pause`). Default 16 MiB. */
  readonly maxPauseBytes: number;
}

/** The limits every store has unless it is given others. */
export const defaultSessionLimits: SessionLimits = Object.freeze({
  maxMessages: 10_000,
  maxMessageBytes: 16 * 1024 * 1024,
  maxSessionBytes: 128 * 1024 * 1024,
  maxStateBytes: 1024 * 1024,
  maxPauseBytes: 16 * 1024 * 1024,
});

/** How a run that wrote a turn ended: every run writes `completed` turns; see `docs/guides/sessions.md`. */
export type SessionTurnOutcome = 'completed' | 'partial' | 'cancelled' | 'failed';

/** One stored message, as a store keeps it. */
export interface SessionRecord {
  /** Its place in the session's history: 0 for the first message, contiguous. */
  readonly position: number;
  /** The message as canonical JSON text (Ghost encodes and decodes it; a store keeps it verbatim). */
  readonly message: string;
  /** The operation that wrote it: the run id for a run's turn, or the `operationId` of an `append`. */
  readonly operationId: string;
  /** For a turn written by a run, how the run ended. */
  readonly outcome?: SessionTurnOutcome;
  readonly createdAt: Date;
}

/** What {@link SessionStoreV1.open} takes. */
export interface SessionOpenRequest {
  /** The session id, checked by `checkSessionId` before it reaches the store. */
  readonly id: string;
  /** The trusted owner the application vouches for, checked like the id. */
  readonly actor: string;
  /** How long to wait for another run to release the session before failing with `SessionBusyError`. */
  readonly lockTimeoutMs: number;
  /** Aborts the wait: the store rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

/**
 * One write to an opened session, applied all at once or not at all. Ghost uses it for a run's turn
 * (`operationId` is the run id) and for `run.session.append` and `replace`.
 */
export interface SessionWrite {
  /**
   * Makes the write idempotent: a store remembers each applied operation id with its `digest`; the
   * same id with the same digest succeeds again without writing, another digest fails with
   * `SessionConflictError`.
   */
  readonly operationId: string;
  /** A digest of everything this write carries, computed by Ghost. */
  readonly digest: string;
  /**
   * Compare-and-swap on the tail: the stored messages from `position` to the end must be exactly
   * `expected` (same count, same text); they are removed before `messages` are added. When they differ
   * the write fails with `SessionConflictError` and changes nothing.
   */
  readonly replaceFrom?: { readonly position: number; readonly expected: readonly string[] };
  /** Messages (canonical JSON text) appended at the end, in order. */
  readonly messages: readonly string[];
  /** The session's new state (JSON), when the write changes it. */
  readonly state?: JsonObject;
  /** Recorded on each message of a run's turn: how the run ended. */
  readonly outcome?: SessionTurnOutcome;
  /**
   * The paused run kept with the session (a run waiting for a person, which any process may resume
   * later): JSON text Ghost writes and reads, which a store keeps verbatim and never interprets.
   * `null` removes it; absent leaves it as it is. Applied atomically with the write's messages and
   * state (all or nothing), and part of what `digest` covers (Ghost computes the digest; a store
   * only compares it). Refused over `maxPauseBytes` like the other limits.
   */
  readonly pause?: string | null;
}

/** What a write did, and the session's size after it. */
export interface SessionWriteResult {
  /** `already-applied` when this operation id was applied before (nothing was written again). */
  readonly status: 'applied' | 'already-applied';
  readonly messageCount: number;
  readonly byteCount: number;
}

/**
 * A session opened for one run, holding the session's lock until {@link OpenedSessionV1.release}:
 * no other `open` of the same session, in this process or any other sharing the store, succeeds
 * meanwhile. A store whose lock can expire (a lease) checks in every write that it still holds it, and
 * fails the write with `SessionBusyError` (`reason: 'lock-lost'`) when it does not.
 */
export interface OpenedSessionV1 {
  readonly id: string;
  readonly actor: string;
  /** Whether the session had been written before this open. */
  readonly isNew: boolean;
  /** The state saved with the last write; `{}` for a new session. */
  readonly state: JsonObject;
  /** Messages stored when opened (or after this handle's last write). */
  readonly messageCount: number;
  /** UTF-8 bytes of those messages. */
  readonly byteCount: number;
  /**
   * The paused run stored when the session was opened (see {@link SessionWrite.pause}), and after
   * this handle's own writes, what they left; `undefined` when there is none.
   */
  readonly pause: string | undefined;
  /**
   * The newest `limit` records before position `before` (default: the end), oldest first. A store
   * reads only those records, so the cost does not grow with the history.
   */
  history(request: { readonly limit: number; readonly before?: number }): Promise<readonly SessionRecord[]>;
  /** Applies a write atomically (see {@link SessionWrite}); the session is created by its first write. */
  write(write: SessionWrite): Promise<SessionWriteResult>;
  /**
   * Releases the lock. Safe to call more than once; later writes fail. It should not reject: a store
   * that cannot reach its storage lets the lease expire instead (a rejection here fails the run's
   * cleanup with a `CleanupError`).
   */
  release(): Promise<void>;
}

/** One session as `list` shows it. */
export interface SessionSummary {
  readonly id: string;
  readonly actor: string;
  readonly messageCount: number;
  readonly byteCount: number;
  /** Whether the session keeps a paused run: lists the sessions waiting for a person. */
  readonly hasPausedRun: boolean;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** What {@link SessionStoreV1.list} takes. */
export interface SessionListRequest {
  readonly actor: string;
  /** At most this many sessions, 1 to 100. Default 20. */
  readonly limit?: number;
  /** The `nextCursor` of the page before (at most 512 bytes). */
  readonly cursor?: string;
}

/** A page of an actor's sessions, newest first. */
export interface SessionPage {
  readonly sessions: readonly SessionSummary[];
  /** Pass it as `cursor` for the next page; absent on the last page. */
  readonly nextCursor?: string;
}

/**
 * A session store: conversations (messages and a JSON state) kept by session id, each owned by a
 * trusted actor, shared by every process that uses the same storage. Made by `memorySessionStore()`,
 * `sqliteSessionStore()` (`@ghost/session-sqlite`), `postgresSessionStore()`
 * (`@ghost/session-postgres`), or your own with `defineSessionStore()` from `@ghost/core/session-store`,
 * checked by `describeSessionStoreConformance` from `@ghost/core/session-store/testing`.
 *
 * Ids and actors reach a store checked (1 to 256 printable characters) and are stored verbatim,
 * never interpreted. An actor other than the owner is refused with `SessionAccessError`, which says
 * nothing of the session.
 */
export interface SessionStoreV1 {
  readonly kind: 'session-store';
  readonly specificationVersion: 'session-store-v1';
  /** A name for messages and traces, such as `sqlite`. */
  readonly name: string;
  /** What one session may hold. */
  readonly limits: SessionLimits;
  /**
   * Opens a session for one run: refuses an actor that is not the owner (`SessionAccessError`),
   * waits up to `lockTimeoutMs` for a run holding it (`SessionBusyError`), and returns it locked.
   */
  open(request: SessionOpenRequest): Promise<OpenedSessionV1>;
  /** The actor's sessions, newest first, a page at a time. */
  list(request: SessionListRequest): Promise<SessionPage>;
  /**
   * Deletes a session with everything it holds, after waiting (up to `lockTimeoutMs`, default 30 s)
   * for a run holding it. Resolves `false` when the actor owns no session with this id.
   */
  delete(request: {
    readonly id: string;
    readonly actor: string;
    readonly lockTimeoutMs?: number;
  }): Promise<boolean>;
  /** Deletes every session last written before `olderThan` that no run holds; resolves how many. */
  prune(request: { readonly olderThan: Date }): Promise<number>;
  /** Releases what the store holds (connections, file handles). Safe to call more than once. */
  close(): Promise<void>;
}
