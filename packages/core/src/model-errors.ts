import { GhostError, type GhostErrorInit, markErrorClass } from './ghost-error.js';
import type { ModelStreamLimits } from './model.js';

/**
 * The codes `@ghost/core`'s model errors carry. Providers may give these classes codes of their
 * own (such as `MODEL_API_KEY_MISSING`), so each class's `code` is open beyond this union.
 */
export type ModelErrorCode =
  | 'MODEL_FAILED'
  | 'MODEL_REQUEST_REJECTED'
  | 'MODEL_AUTHENTICATION_FAILED'
  | 'MODEL_RATE_LIMITED'
  | 'MODEL_CONTEXT_OVERFLOW'
  | 'MODEL_CONTENT_FILTERED'
  | 'MODEL_UNAVAILABLE'
  | 'MODEL_RESPONSE_INVALID'
  | 'MODEL_TOO_MANY_TOOL_CALLS'
  | 'MODEL_TOOL_CALL_TOO_LARGE'
  | 'MODEL_ANSWER_TOO_LARGE'
  | 'MODEL_STREAM_EVENT_TOO_LARGE'
  | 'MODEL_STREAM_IDLE'
  | 'OUTPUT_INVALID';

/** What every model error can say about the failed request, besides its message. */
export interface ModelErrorFacts {
  /** The HTTP status the provider answered with, when there was one. */
  readonly statusCode?: number;
  /** The provider, such as `openai`. */
  readonly provider?: string;
  /** The provider's own request id, for its support. */
  readonly requestId?: string;
  /** The provider's own name for the failure, such as `overloaded_error`. */
  readonly errorType?: string;
  /** The bound of {@link ModelStreamLimits} the answer crossed, when one ended it. */
  readonly limit?: keyof ModelStreamLimits;
}

/** What a model error's constructor takes: the usual error options and the facts of the failed request. */
export type ModelErrorInit = GhostErrorInit<ModelErrorCode | (string & {})> & ModelErrorFacts;

/** What the constructors of the errors a retry may cure take: a model error's, and what the provider said about retrying. */
export type RetryableModelErrorInit = ModelErrorInit & {
  /** How long the provider asked to wait before the next request. */
  readonly retryAfterMs?: number;
  /** `false` records that the provider said a retry cannot help (an exhausted quota also answers 429). */
  readonly isRetryable?: boolean;
};

/**
 * The model failed or broke its contract (a stream error, a malformed part). Ends the run as
 * `failed`. Providers throw its subclasses (`ModelRateLimitError`, ...); `isRetryable` says
 * whether trying the same request again may succeed.
 */
export class ModelError extends GhostError {
  static {
    markErrorClass(ModelError, 'ModelError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: ModelErrorCode | (string & {});
  /** The HTTP status the provider answered with, when there was one. */
  readonly statusCode: number | undefined;
  /** The provider, such as `openai`, when known. */
  readonly provider: string | undefined;
  /** The provider's own request id, for its support. */
  readonly requestId: string | undefined;
  /** The provider's own name for the failure, such as `overloaded_error`. */
  readonly errorType: string | undefined;
  /**
   * The bound of `ModelStreamLimits` the answer crossed (such as `maxStreamEventBytes`), when one
   * ended it; raise it in the agent's `limits` if real answers need more.
   */
  readonly limit: keyof ModelStreamLimits | undefined;

  constructor(message: string, init: ModelErrorInit = {}) {
    super(message, { ...init, code: init.code ?? 'MODEL_FAILED' });
    this.statusCode = init.statusCode;
    this.provider = init.provider;
    this.requestId = init.requestId;
    this.errorType = init.errorType;
    this.limit = init.limit;
  }

  /** Whether the same request may succeed if sent again (rate limits, unavailable providers). */
  get isRetryable(): boolean {
    return false;
  }
}

/**
 * The provider refused the credentials (HTTP 401 or 403), or none were given. The message names
 * the environment variable or option to set. Never retried.
 */
export class ModelAuthenticationError extends ModelError {
  static {
    markErrorClass(ModelAuthenticationError, 'ModelAuthenticationError');
  }

  constructor(message: string, init: ModelErrorInit = {}) {
    super(message, { ...init, code: init.code ?? 'MODEL_AUTHENTICATION_FAILED' });
  }
}

/**
 * The provider is rate limiting (HTTP 429). Retried after `retryAfterMs` when the provider said,
 * unless the provider said a retry cannot help.
 */
export class ModelRateLimitError extends ModelError {
  static {
    markErrorClass(ModelRateLimitError, 'ModelRateLimitError');
  }

  /** How long the provider asked to wait before the next request, when it said. */
  readonly retryAfterMs: number | undefined;
  readonly #isRetryable: boolean;

  /**
   * `init.isRetryable: false` records that the provider said a retry cannot help (an exhausted
   * quota also answers 429).
   */
  constructor(message: string, init: RetryableModelErrorInit = {}) {
    super(message, { ...init, code: init.code ?? 'MODEL_RATE_LIMITED' });
    this.retryAfterMs = init.retryAfterMs;
    this.#isRetryable = init.isRetryable ?? true;
  }

  /** True unless the provider said a retry cannot help. */
  override get isRetryable(): boolean {
    return this.#isRetryable;
  }
}

/** The conversation no longer fits the model's context window. Shorten it or pick a larger model. */
export class ModelContextOverflowError extends ModelError {
  static {
    markErrorClass(ModelContextOverflowError, 'ModelContextOverflowError');
  }

  constructor(message: string, init: ModelErrorInit = {}) {
    super(message, { ...init, code: init.code ?? 'MODEL_CONTEXT_OVERFLOW' });
  }
}

/** The provider's content filter refused the request or stopped the answer. */
export class ModelContentFilterError extends ModelError {
  static {
    markErrorClass(ModelContentFilterError, 'ModelContentFilterError');
  }

  constructor(message: string, init: ModelErrorInit = {}) {
    super(message, { ...init, code: init.code ?? 'MODEL_CONTENT_FILTERED' });
  }
}

/**
 * The provider could not answer: a 5xx, an overloaded model, a connection that failed or timed
 * out, a stream that sent nothing for `streamIdleTimeoutMs` (code `MODEL_STREAM_IDLE`). Retried
 * before the answer's first part, unless the provider said a retry cannot help.
 */
export class ModelUnavailableError extends ModelError {
  static {
    markErrorClass(ModelUnavailableError, 'ModelUnavailableError');
  }

  /** How long the provider asked to wait before the next request, when it said. */
  readonly retryAfterMs: number | undefined;
  readonly #isRetryable: boolean;

  /** `init.isRetryable: false` records that the provider said a retry cannot help. */
  constructor(message: string, init: RetryableModelErrorInit = {}) {
    super(message, { ...init, code: init.code ?? 'MODEL_UNAVAILABLE' });
    this.retryAfterMs = init.retryAfterMs;
    this.#isRetryable = init.isRetryable ?? true;
  }

  /** True unless the provider said a retry cannot help. */
  override get isRetryable(): boolean {
    return this.#isRetryable;
  }
}

/**
 * The provider's answer broke its own format: a malformed or truncated stream, an event out of
 * order, a stream that ended without finishing, or a request the provider rejected as invalid. Or
 * it crossed one of the agent's `ModelStreamLimits`, which `limit` names (codes
 * `MODEL_TOO_MANY_TOOL_CALLS`, `MODEL_TOOL_CALL_TOO_LARGE`, `MODEL_ANSWER_TOO_LARGE`,
 * `MODEL_STREAM_EVENT_TOO_LARGE`). Never retried.
 */
export class ModelResponseError extends ModelError {
  static {
    markErrorClass(ModelResponseError, 'ModelResponseError');
  }

  constructor(message: string, init: ModelErrorInit = {}) {
    super(message, { ...init, code: init.code ?? 'MODEL_RESPONSE_INVALID' });
  }
}

/**
 * The model's final answer did not match the run's `output` schema, even after one repair turn.
 * `text` is what it answered; `problems` say where it went wrong.
 */
export class OutputValidationError extends ModelError {
  static {
    markErrorClass(OutputValidationError, 'OutputValidationError');
  }

  /** The model's last answer. */
  readonly text: string;
  /** Each mismatch, as `path: message`. */
  readonly problems: readonly string[];

  constructor(message: string, init: ModelErrorInit & { text?: string; problems?: readonly string[] } = {}) {
    super(message, { ...init, code: init.code ?? 'OUTPUT_INVALID' });
    this.text = init.text ?? '';
    this.problems = init.problems ?? [];
  }
}
