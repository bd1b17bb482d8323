import { GhostError, type GhostErrorInit, markErrorClass } from './ghost-error.js';

/** The codes of the errors sessions and session stores throw. */
export type SessionErrorCode =
  | 'SESSION_ACCESS_DENIED'
  | 'SESSION_BUSY'
  | 'SESSION_LIMIT_EXCEEDED'
  | 'SESSION_CONFLICT'
  | 'SESSION_STORE_FAILED';

/**
 * The actor may not open this session: another actor owns it. The message names neither the
 * owner nor anything the session holds.
 */
export class SessionAccessError extends GhostError {
  static {
    markErrorClass(SessionAccessError, 'SessionAccessError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'SESSION_ACCESS_DENIED';

  constructor(
    message = 'This session cannot be opened by this actor. Use the actor that created it, or another session id.',
    init: GhostErrorInit<'SESSION_ACCESS_DENIED'> = {},
  ) {
    super(message, { ...init, code: 'SESSION_ACCESS_DENIED' });
  }
}

/** What {@link SessionBusyError}'s constructor takes besides the message. */
export type SessionBusyErrorInit = GhostErrorInit<'SESSION_BUSY'> & {
  readonly store?: string;
  readonly sessionId?: string;
  readonly reason?: 'timeout' | 'lock-lost' | 'paused';
  readonly lockTimeoutMs?: number;
};

/**
 * Another run holds the session and did not release it within `lockTimeoutMs` (`reason: 'timeout'`),
 * or this run's hold on it ended before its write (`reason: 'lock-lost'`: its lease expired, or the
 * session was released or deleted). Nothing was written. Retry later, or raise `lockTimeoutMs`.
 * With `reason: 'paused'`, the session keeps a run paused for a person's approval: a new run
 * cannot start on it until `agent.resume()` completes or discards that run.
 */
export class SessionBusyError extends GhostError {
  static {
    markErrorClass(SessionBusyError, 'SessionBusyError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'SESSION_BUSY';
  /** The store's name. */
  readonly store: string | undefined;
  readonly sessionId: string | undefined;
  readonly reason: 'timeout' | 'lock-lost' | 'paused' | undefined;
  /** How long the run waited, for `reason: 'timeout'`. */
  readonly lockTimeoutMs: number | undefined;

  constructor(message: string, init: SessionBusyErrorInit = {}) {
    super(message, { ...init, code: 'SESSION_BUSY' });
    this.store = init.store;
    this.sessionId = init.sessionId;
    this.reason = init.reason;
    this.lockTimeoutMs = init.lockTimeoutMs;
  }
}

/** Which limit of `SessionLimits` a write would pass. */
export type SessionLimitName =
  | 'maxMessages'
  | 'maxMessageBytes'
  | 'maxSessionBytes'
  | 'maxStateBytes'
  | 'maxPauseBytes';

/** What {@link SessionLimitError}'s constructor takes besides the message. */
export type SessionLimitErrorInit = GhostErrorInit<'SESSION_LIMIT_EXCEEDED'> & {
  readonly limit: SessionLimitName;
  readonly size: number;
  readonly max: number;
  readonly sessionId?: string;
};

/**
 * A write would pass one of the session's limits; nothing was written. `limit` names it, `size` is
 * what the session (or the message, the state, or the paused run) would have become and `max` the
 * limit. Start a new session, trim the history with `run.session.replace`, or give the store higher
 * limits.
 */
export class SessionLimitError extends GhostError {
  static {
    markErrorClass(SessionLimitError, 'SessionLimitError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'SESSION_LIMIT_EXCEEDED';
  readonly limit: SessionLimitName;
  readonly size: number;
  readonly max: number;
  readonly sessionId: string | undefined;

  constructor(message: string, init: SessionLimitErrorInit) {
    super(message, { ...init, code: 'SESSION_LIMIT_EXCEEDED' });
    this.limit = init.limit;
    this.size = init.size;
    this.max = init.max;
    this.sessionId = init.sessionId;
  }
}

/** What {@link SessionConflictError}'s constructor takes besides the message. */
export type SessionConflictErrorInit = GhostErrorInit<'SESSION_CONFLICT'> & {
  readonly reason: 'operation-reused' | 'tail-moved';
  readonly operationId?: string;
  readonly sessionId?: string;
};

/**
 * A write did not apply, and changed nothing: its operation id was used before for other content
 * (`reason: 'operation-reused'`; give each distinct write its own id), or the messages `replace`
 * expected at the end of the history are no longer there (`reason: 'tail-moved'`; read the history
 * again and retry).
 */
export class SessionConflictError extends GhostError {
  static {
    markErrorClass(SessionConflictError, 'SessionConflictError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'SESSION_CONFLICT';
  readonly reason: 'operation-reused' | 'tail-moved';
  readonly operationId: string | undefined;
  readonly sessionId: string | undefined;

  constructor(message: string, init: SessionConflictErrorInit) {
    super(message, { ...init, code: 'SESSION_CONFLICT' });
    this.reason = init.reason;
    this.operationId = init.operationId;
    this.sessionId = init.sessionId;
  }
}

/** What {@link SessionStoreError}'s constructor takes besides the message. */
export type SessionStoreErrorInit = GhostErrorInit<'SESSION_STORE_FAILED'> & {
  /** The store's name, such as `postgres`. */
  readonly store: string;
  /**
   * `unavailable`: the storage could not be reached or failed (retry when it is back); `corrupt`: a
   * stored row could not be read; `schema`: the storage was written by a newer release, or its schema
   * is not Ghost's; `closed`: the store was closed.
   */
  readonly reason: 'unavailable' | 'corrupt' | 'schema' | 'closed';
  readonly sessionId?: string;
};

/**
 * A session store failed: its storage is unreachable, a stored row is unreadable, its schema is from
 * a newer release, or it was closed. The message names the store and says what to do; `cause` holds
 * the driver's error. A run that meets it fails, and writes nothing half-way.
 */
export class SessionStoreError extends GhostError {
  static {
    markErrorClass(SessionStoreError, 'SessionStoreError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'SESSION_STORE_FAILED';
  readonly store: string;
  readonly reason: 'unavailable' | 'corrupt' | 'schema' | 'closed';
  readonly sessionId: string | undefined;

  constructor(message: string, init: SessionStoreErrorInit) {
    super(message, { ...init, code: 'SESSION_STORE_FAILED' });
    this.store = init.store;
    this.reason = init.reason;
    this.sessionId = init.sessionId;
  }
}
