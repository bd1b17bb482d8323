import { type GhostErrorOptions, ModelError } from './errors.js';

/** What every model error can say about the failed request, besides its message. */
export interface ModelErrorFacts {
  /** The HTTP status the provider answered with, when there was one. */
  readonly statusCode?: number;
  /** The provider, such as `openai`. */
  readonly provider?: string;
  /** The provider's own request id, for its support. */
  readonly requestId?: string;
}

/** What a `ModelError` subclass's constructor takes: the usual error options and the request's facts. */
export type ModelErrorInit = Partial<GhostErrorOptions> & ModelErrorFacts;

function detailsOf(init: ModelErrorInit): Record<string, unknown> {
  const { statusCode, provider, requestId } = init;
  return {
    ...init.details,
    ...(statusCode !== undefined ? { statusCode } : {}),
    ...(provider !== undefined ? { provider } : {}),
    ...(requestId !== undefined ? { requestId } : {}),
  };
}

function baseOptions(init: ModelErrorInit, code: string): Partial<GhostErrorOptions> {
  return {
    code: init.code ?? code,
    details: detailsOf(init),
    ...(init.cause !== undefined ? { cause: init.cause } : {}),
  };
}

/**
 * The provider refused the credentials (HTTP 401 or 403), or none were given. The message names
 * the environment variable or option to set. Never retried.
 */
export class ModelAuthenticationError extends ModelError {
  readonly statusCode: number | undefined;
  constructor(message: string, init: ModelErrorInit = {}) {
    super(message, baseOptions(init, 'MODEL_AUTHENTICATION_FAILED'));
    this.statusCode = init.statusCode;
  }
}

/** The provider is rate limiting (HTTP 429). Retried after `retryAfterMs` when the provider said. */
export class ModelRateLimitError extends ModelError {
  readonly statusCode: number | undefined;
  /** How long the provider asked to wait before the next request, when it said. */
  readonly retryAfterMs: number | undefined;
  override get isRetryable(): boolean {
    return true;
  }
  constructor(message: string, init: ModelErrorInit & { readonly retryAfterMs?: number } = {}) {
    super(message, baseOptions(init, 'MODEL_RATE_LIMITED'));
    this.statusCode = init.statusCode;
    this.retryAfterMs = init.retryAfterMs;
  }
}

/** The conversation no longer fits the model's context window. Shorten it or pick a larger model. */
export class ModelContextOverflowError extends ModelError {
  readonly statusCode: number | undefined;
  constructor(message: string, init: ModelErrorInit = {}) {
    super(message, baseOptions(init, 'MODEL_CONTEXT_OVERFLOW'));
    this.statusCode = init.statusCode;
  }
}

/** The provider's content filter refused the request or stopped the answer. */
export class ModelContentFilterError extends ModelError {
  readonly statusCode: number | undefined;
  constructor(message: string, init: ModelErrorInit = {}) {
    super(message, baseOptions(init, 'MODEL_CONTENT_FILTERED'));
    this.statusCode = init.statusCode;
  }
}

/**
 * The provider could not answer: a 5xx, an overloaded model, a connection that failed or timed
 * out. Retried.
 */
export class ModelUnavailableError extends ModelError {
  readonly statusCode: number | undefined;
  /** How long the provider asked to wait before the next request, when it said. */
  readonly retryAfterMs: number | undefined;
  override get isRetryable(): boolean {
    return true;
  }
  constructor(message: string, init: ModelErrorInit & { readonly retryAfterMs?: number } = {}) {
    super(message, baseOptions(init, 'MODEL_UNAVAILABLE'));
    this.statusCode = init.statusCode;
    this.retryAfterMs = init.retryAfterMs;
  }
}

/**
 * The provider's answer broke its own format: a malformed or truncated stream, an event out of
 * order, a stream that ended without finishing, or a request the provider rejected as invalid.
 */
export class ModelResponseError extends ModelError {
  readonly statusCode: number | undefined;
  constructor(message: string, init: ModelErrorInit = {}) {
    super(message, baseOptions(init, 'MODEL_RESPONSE_INVALID'));
    this.statusCode = init.statusCode;
  }
}

/**
 * The model's final answer did not match the run's `output` schema, even after one repair turn.
 * `text` is what it answered; `problems` say where it went wrong.
 */
export class OutputValidationError extends ModelError {
  /** The model's last answer. */
  readonly text: string;
  /** Each mismatch, as `path: message`. */
  readonly problems: readonly string[];
  constructor(
    message: string,
    init: Partial<GhostErrorOptions> & { text?: string; problems?: readonly string[] } = {},
  ) {
    const problems = init.problems ?? [];
    super(message, {
      code: init.code ?? 'OUTPUT_INVALID',
      details: { ...init.details, problems },
      ...(init.cause !== undefined ? { cause: init.cause } : {}),
    });
    this.text = init.text ?? '';
    this.problems = problems;
  }
}
