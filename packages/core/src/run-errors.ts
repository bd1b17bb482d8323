import { GhostError, type GhostErrorInit, markErrorClass } from './ghost-error.js';

/** The codes of the errors that end or refuse a run. */
export type RunErrorCode =
  | 'RUN_CANCELLED'
  | 'RUN_DEADLINE_EXCEEDED'
  | 'RUN_STATE_INVALID'
  | 'AGENT_INTERJECTION_UNAVAILABLE'
  | 'AGENT_LIMIT_REACHED'
  | 'APPROVAL_UNKNOWN'
  | 'APPROVAL_REJECTED'
  | 'APPROVAL_TIMED_OUT'
  | 'APPROVAL_SUSPENDED'
  | 'RUN_RESUME_CONFLICT'
  | PausedRunErrorCode;

/** The run was cancelled through its `AbortSignal`. Ends the run as `cancelled`. */
export class CancelledError extends GhostError {
  static {
    markErrorClass(CancelledError, 'CancelledError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'RUN_CANCELLED';

  constructor(message = 'The run was cancelled.', init: GhostErrorInit<'RUN_CANCELLED'> = {}) {
    super(message, { ...init, code: 'RUN_CANCELLED' });
  }
}

/** The run's deadline passed. Ends the run as `partial`, keeping the text produced so far. */
export class DeadlineExceededError extends GhostError {
  static {
    markErrorClass(DeadlineExceededError, 'DeadlineExceededError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'RUN_DEADLINE_EXCEEDED';

  constructor(message = 'The run reached its deadline.', init: GhostErrorInit<'RUN_DEADLINE_EXCEEDED'> = {}) {
    super(message, { ...init, code: 'RUN_DEADLINE_EXCEEDED' });
  }
}

/**
 * `run.interject()` was called while the run's agent (its one entrypoint) was not running: before
 * the run started or after it ended, or the run ended before the message reached the agent.
 */
export class AgentInterjectionError extends GhostError {
  static {
    markErrorClass(AgentInterjectionError, 'AgentInterjectionError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'AGENT_INTERJECTION_UNAVAILABLE';

  constructor(message: string, init: GhostErrorInit<'AGENT_INTERJECTION_UNAVAILABLE'> = {}) {
    super(message, { ...init, code: 'AGENT_INTERJECTION_UNAVAILABLE' });
  }
}

/**
 * An agent reached one of its limits: `maxTurns` (ends the run as `failed`), or `maxDepth`, when
 * an agent would run nested deeper than an agent above it allows (the tool call that tried it
 * fails, and the model reads why).
 */
export class AgentLimitError extends GhostError {
  static {
    markErrorClass(AgentLimitError, 'AgentLimitError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'AGENT_LIMIT_REACHED';
  /** The `maxTurns` limit the run reached, when that was the limit. */
  readonly maxTurns: number | undefined;
  /** The `maxDepth` limit that refused a nested agent, when that was the limit. */
  readonly maxDepth: number | undefined;

  constructor(
    message: string,
    init: GhostErrorInit<'AGENT_LIMIT_REACHED'> & {
      readonly maxTurns?: number;
      readonly maxDepth?: number;
    } = {},
  ) {
    super(message, { ...init, code: 'AGENT_LIMIT_REACHED' });
    this.maxTurns = init.maxTurns;
    this.maxDepth = init.maxDepth;
  }
}

/** A `Run` was used in a way its lifecycle does not allow, such as executing it twice. */
export class RunStateError extends GhostError {
  static {
    markErrorClass(RunStateError, 'RunStateError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'RUN_STATE_INVALID';

  constructor(message: string, init: GhostErrorInit<'RUN_STATE_INVALID'> = {}) {
    super(message, { ...init, code: 'RUN_STATE_INVALID' });
  }
}

/** The codes an {@link ApprovalError} carries. */
export type ApprovalErrorCode =
  | 'APPROVAL_UNKNOWN'
  | 'APPROVAL_REJECTED'
  | 'APPROVAL_TIMED_OUT'
  | 'APPROVAL_SUSPENDED';

/**
 * About a tool call's approval (`defineTool({ needsApproval })`). `APPROVAL_UNKNOWN` is thrown by
 * `run.approve()` / `run.reject()` for an id that is not pending (never requested, already
 * answered, timed out, or its run ended). `APPROVAL_REJECTED` and `APPROVAL_TIMED_OUT` are never
 * thrown to the application: they are the code of the error result the model reads, as the
 * call's `tool_stop` event carries it, when a person rejected the call or no one answered in time.
 * `APPROVAL_SUSPENDED` is the code of a call's telemetry-only `tool_stop` when its run suspended
 * (`approvals: 'suspend'`) to wait for the decision; the call continues in `agent.resume()`.
 */
export class ApprovalError extends GhostError {
  static {
    markErrorClass(ApprovalError, 'ApprovalError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: ApprovalErrorCode;
  /** The approval id the error is about. */
  readonly approvalId: string | undefined;

  constructor(
    message: string,
    init: GhostErrorInit<ApprovalErrorCode> & {
      readonly code: ApprovalErrorCode;
      readonly approvalId?: string;
    },
  ) {
    super(message, init);
    this.approvalId = init.approvalId;
  }
}

/**
 * `agent.resume()` found nothing to resume: the session keeps no paused run (another resume
 * completed it, or it never paused), or a decision it was given was already made by another resume.
 * Nothing ran. Read the session's history, or `run.pendingApprovals` of the resume that won.
 */
export class RunResumeConflictError extends GhostError {
  static {
    markErrorClass(RunResumeConflictError, 'RunResumeConflictError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'RUN_RESUME_CONFLICT';
  readonly sessionId: string | undefined;
  /** The approvals already decided elsewhere, when that was the conflict. */
  readonly approvalIds: readonly string[];

  constructor(
    message: string,
    init: GhostErrorInit<'RUN_RESUME_CONFLICT'> & {
      readonly sessionId?: string;
      readonly approvalIds?: readonly string[];
    } = {},
  ) {
    super(message, { ...init, code: 'RUN_RESUME_CONFLICT' });
    this.sessionId = init.sessionId;
    this.approvalIds = Object.freeze([...(init.approvalIds ?? [])]);
  }
}

/** The codes a {@link PausedRunError} carries. */
export type PausedRunErrorCode = 'PAUSED_RUN_CORRUPT' | 'PAUSED_RUN_VERSION' | 'PAUSED_RUN_INCOMPATIBLE';

/**
 * A paused run cannot be resumed, and nothing ran: its stored state is unreadable
 * (`PAUSED_RUN_CORRUPT`), of a format version this Ghost does not read (`PAUSED_RUN_VERSION`), or
 * the agent resuming it is not the one that paused it or lost a tool it needs
 * (`PAUSED_RUN_INCOMPATIBLE`, with `missing` naming what is gone).
 */
export class PausedRunError extends GhostError {
  static {
    markErrorClass(PausedRunError, 'PausedRunError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: PausedRunErrorCode;
  readonly sessionId: string | undefined;
  /** With `PAUSED_RUN_INCOMPATIBLE`: the agent or tools the paused run needs that are gone. */
  readonly missing: readonly string[];

  constructor(
    message: string,
    init: GhostErrorInit<PausedRunErrorCode> & {
      readonly code: PausedRunErrorCode;
      readonly sessionId?: string;
      readonly missing?: readonly string[];
    },
  ) {
    super(message, init);
    this.sessionId = init.sessionId;
    this.missing = Object.freeze([...(init.missing ?? [])]);
  }
}
