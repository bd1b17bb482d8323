import { CancelledError, DeadlineExceededError } from './errors.js';
import type { RunSession } from './run-session.js';

/** The normalised request a run carries: what was asked, by whom, with which application data. */
export interface Invocation {
  /** Unique per agent invocation. */
  readonly invocationId: string;
  /** The id of the run this invocation belongs to. */
  readonly runId: string;
  readonly agentName: string;
  /** The user's message. */
  readonly input: string;
  /**
   * A trusted caller id supplied by the application (never inferred from the model); the session's
   * actor when the run continues a session.
   */
  readonly actorId: string | undefined;
  /** The id of the session the run continues (`ask(input, { session })`), if any. */
  readonly sessionId: string | undefined;
  /**
   * Application data for tools and authorization, such as a tenant id. With a session, its state
   * comes first and the data given to `ask` over it, key by key.
   */
  readonly context: Readonly<Record<string, unknown>>;
  /** Application metadata for tracing and logs. */
  readonly metadata: Readonly<Record<string, unknown>>;
  /** When the run must end, in milliseconds since the epoch, if it has a deadline. */
  readonly deadline: number | undefined;
}

/** The options of {@link RunContext}'s constructor. */
export interface RunContextInit {
  readonly invocation: Invocation;
  readonly signal: AbortSignal;
  readonly state?: Record<string, unknown>;
  readonly metadata?: Readonly<Record<string, unknown>>;
  /** The session the run continues, once opened. */
  readonly session?: RunSession | undefined;
}

/**
 * What work inside a run can see: the invocation, a cancellation signal that also fires at the
 * deadline, mutable per-run `state`, and `metadata`. Tools receive it as `context.run`.
 */
export class RunContext {
  readonly invocation: Invocation;
  /** Aborts when the run is cancelled or reaches its deadline; its `reason` says which. */
  readonly signal: AbortSignal;
  /** Per-run application state, shared by the tools of this run. */
  readonly state: Record<string, unknown>;
  readonly metadata: Readonly<Record<string, unknown>>;
  /**
   * The session the run continues (`ask(input, { session })`): its state and history. `undefined`
   * for a run without one.
   */
  readonly session: RunSession | undefined;

  constructor(init: RunContextInit) {
    this.invocation = init.invocation;
    this.signal = init.signal;
    this.session = init.session;
    this.state = init.state ?? {};
    this.metadata = Object.freeze({ ...init.invocation.metadata, ...init.metadata });
  }

  /** The deadline in milliseconds since the epoch, if the run has one. */
  get deadline(): number | undefined {
    return this.invocation.deadline;
  }

  /** Milliseconds left before the deadline (never negative), or `undefined` without a deadline. */
  remainingTimeMs(): number | undefined {
    const { deadline } = this;
    return deadline === undefined ? undefined : Math.max(0, deadline - Date.now());
  }

  /** Throws `CancelledError` or `DeadlineExceededError` when the run must stop. */
  throwIfStopped(): void {
    if (this.signal.aborted) throw stopReason(this.signal);
    const remaining = this.remainingTimeMs();
    if (remaining !== undefined && remaining <= 0) throw new DeadlineExceededError();
  }
}

/** The Ghost error an aborted run signal stands for. */
export function stopReason(signal: AbortSignal): CancelledError | DeadlineExceededError {
  const reason: unknown = signal.reason;
  if (DeadlineExceededError.isInstance(reason) || CancelledError.isInstance(reason)) return reason;
  return new CancelledError('The run was cancelled.', { cause: reason });
}
