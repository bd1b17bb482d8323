const errorMarker = Symbol.for('ghost.error');

/** Options every {@link GhostError} accepts. */
export interface GhostErrorOptions {
  /** A stable, machine-readable code such as `SANDBOX_UNAVAILABLE`. */
  code: string;
  /** Structured facts about the failure, safe to log. */
  details?: Record<string, unknown>;
  /** The underlying error, when there is one. */
  cause?: unknown;
}

/**
 * The base of every error Ghost throws. Each has a stable `code`, a message that says what to do
 * next, optional `details` and `cause`.
 *
 * Use the static `isInstance()` instead of `instanceof`: it also recognises errors thrown by
 * another installed copy of a Ghost package.
 *
 * @example
 * ```ts
 * try {
 *   await agent.ask('hello');
 * } catch (error) {
 *   if (ConfigurationError.isInstance(error)) console.error(error.code, error.message);
 * }
 * ```
 */
export class GhostError extends Error {
  /** A stable, machine-readable code such as `SANDBOX_UNAVAILABLE`. */
  readonly code: string;
  /** Structured facts about the failure, safe to log. */
  readonly details: Readonly<Record<string, unknown>> | undefined;
  /** @internal the class names of this error's chain, read by `isInstance` across package copies. */
  readonly [errorMarker]: readonly string[];

  constructor(message: string, options: GhostErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = options.code;
    this.details = options.details;
    this.name = new.target.name;
    const names: string[] = [];
    for (let proto = new.target.prototype; proto && proto !== Error.prototype; ) {
      names.push((proto.constructor as { name: string }).name);
      proto = Object.getPrototypeOf(proto);
    }
    this[errorMarker] = names;
  }

  /** True when `value` is an instance of this class, from any installed copy of Ghost. */
  static isInstance<T extends typeof GhostError>(this: T, value: unknown): value is InstanceType<T> {
    if (typeof value !== 'object' || value === null) return false;
    const names = (value as { [errorMarker]?: unknown })[errorMarker];
    // biome-ignore lint/complexity/noThisInStatic: `this` is the subclass isInstance was called on
    return Array.isArray(names) && names.includes(this.name);
  }
}

/**
 * A definition or configuration is wrong: a tool name, a schema, an unknown option, a plugin.
 * Thrown at definition time, before any run starts.
 */
export class ConfigurationError extends GhostError {
  constructor(message: string, options: Partial<GhostErrorOptions> = {}) {
    super(message, { code: 'CONFIGURATION_INVALID', ...options });
  }
}

/**
 * Thrown by a tool to tell the model what went wrong. Its message goes to the model as the tool
 * result and the run goes on, so write it for the model: say what to change.
 *
 * @example
 * ```ts
 * throw new ToolError('No order 481 exists. Ask the customer for the order number.');
 * ```
 */
export class ToolError extends GhostError {
  constructor(message: string, options: Partial<GhostErrorOptions> = {}) {
    super(message, { code: 'TOOL_ERROR', ...options });
  }
}

/** The run was cancelled through its `AbortSignal`. Ends the run as `cancelled`. */
export class CancelledError extends GhostError {
  constructor(message = 'The run was cancelled.', options: Partial<GhostErrorOptions> = {}) {
    super(message, { code: 'RUN_CANCELLED', ...options });
  }
}

/** The run's deadline passed. Ends the run as `partial`, keeping the text produced so far. */
export class DeadlineExceededError extends GhostError {
  constructor(message = 'The run reached its deadline.', options: Partial<GhostErrorOptions> = {}) {
    super(message, { code: 'RUN_DEADLINE_EXCEEDED', ...options });
  }
}

/**
 * Releasing a resource failed, so Ghost cannot claim that everything the run started has ended.
 * Raised by `run.close()` and by anything that owns processes or files.
 */
export class CleanupError extends GhostError {
  constructor(message: string, options: Partial<GhostErrorOptions> = {}) {
    super(message, { code: 'CLEANUP_FAILED', ...options });
  }
}

/** `run.interject()` was called while no agent entrypoint was active. */
export class AgentInterjectionError extends GhostError {
  constructor(message: string, options: Partial<GhostErrorOptions> = {}) {
    super(message, { code: 'AGENT_INTERJECTION_UNAVAILABLE', ...options });
  }
}

/** A run reached one of its agent's limits (`maxTurns`). Ends the run as `failed`. */
export class AgentLimitError extends GhostError {
  constructor(message: string, options: Partial<GhostErrorOptions> = {}) {
    super(message, { code: 'AGENT_LIMIT_REACHED', ...options });
  }
}

/** A `Run` was used in a way its lifecycle does not allow, such as executing it twice. */
export class RunStateError extends GhostError {
  constructor(message: string, options: Partial<GhostErrorOptions> = {}) {
    super(message, { code: 'RUN_STATE_INVALID', ...options });
  }
}

/**
 * The model failed or broke its contract (a stream error, a malformed part). Ends the run as
 * `failed`. Providers throw its subclasses (`ModelRateLimitError`, ...); `isRetryable` says
 * whether trying the same request again may succeed.
 */
export class ModelError extends GhostError {
  constructor(message: string, options: Partial<GhostErrorOptions> = {}) {
    super(message, { code: 'MODEL_FAILED', ...options });
  }

  /** Whether the same request may succeed if sent again (rate limits, unavailable providers). */
  get isRetryable(): boolean {
    return false;
  }
}

/**
 * The requested sandbox cannot contain programs on this machine. Ghost fails closed: it never
 * falls back to running code unconfined. The message says what is missing and how to fix it.
 */
export class SandboxUnavailableError extends GhostError {
  constructor(message: string, options: Partial<GhostErrorOptions> = {}) {
    super(message, { code: 'SANDBOX_UNAVAILABLE', ...options });
  }
}

/**
 * A tool call ran past its tool's `timeoutMs`. It is the `reason` of the call's aborted signal,
 * and the model is told the call timed out.
 */
export class ToolTimeoutError extends GhostError {
  constructor(message: string, options: Partial<GhostErrorOptions> = {}) {
    super(message, { code: 'TOOL_TIMEOUT', ...options });
  }
}

/** A tool returned something that is not JSON, or does not match its output schema. */
export class ToolResultInvalidError extends GhostError {
  constructor(message: string, options: Partial<GhostErrorOptions> = {}) {
    super(message, { code: 'TOOL_RESULT_INVALID', ...options });
  }
}

/**
 * A tool source (such as an MCP server) could not be opened when a run started, or its tools
 * collide with another tool's name. Fails the run; the message names the source and the cause.
 */
export class ToolSourceError extends GhostError {
  constructor(message: string, options: Partial<GhostErrorOptions> = {}) {
    super(message, { code: 'TOOL_SOURCE_FAILED', ...options });
  }
}
