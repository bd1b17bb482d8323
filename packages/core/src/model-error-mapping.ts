import { ModelError } from './errors.js';
import type { ModelStreamLimits } from './model.js';
import {
  ModelAuthenticationError,
  ModelContentFilterError,
  ModelContextOverflowError,
  ModelRateLimitError,
  ModelResponseError,
  ModelUnavailableError,
} from './model-errors.js';
import { retryAfterMilliseconds } from './model-retry.js';

/** What a provider knows about a failed HTTP request. */
export interface ProviderHttpFailure {
  /** The provider's name, such as `openai`, for the message. */
  readonly provider: string;
  readonly status: number;
  /** The provider's own error message. */
  readonly message: string;
  /** The provider's error code or type, such as `context_length_exceeded`. */
  readonly errorCode?: string;
  readonly headers?: { get(name: string): string | null };
  /** What to set when the credentials are refused, such as `OPENAI_API_KEY`. */
  readonly credentialsHint?: string;
  /**
   * Whether the provider (or its SDK) said a retry may help, when it said: `false` keeps a 429 or
   * 5xx from being retried (an exhausted quota, say).
   */
  readonly isRetryable?: boolean;
  readonly cause?: unknown;
}

const contextOverflow =
  /context.?length|context.?window|too many tokens|maximum context|prompt is too long|input is too long/i;
const contentFilter = /content.?(filter|policy|management)|safety system/i;

/**
 * Turns a provider's HTTP error into the `ModelError` subclass a user can act on: 401/403 →
 * {@link ModelAuthenticationError}, 429 → {@link ModelRateLimitError} (with `retryAfterMs`),
 * a context-length refusal → {@link ModelContextOverflowError}, a content-filter refusal →
 * {@link ModelContentFilterError}, 408/409/5xx and overload (529) → {@link ModelUnavailableError},
 * anything else → a `ModelError` with code `MODEL_REQUEST_REJECTED`.
 */
export function modelErrorFromHttp(failure: ProviderHttpFailure): ModelError {
  const { provider, status, message, errorCode, headers, cause } = failure;
  const requestId = headers?.get('x-request-id') ?? headers?.get('request-id') ?? undefined;
  const init = {
    statusCode: status,
    provider,
    ...(requestId ? { requestId } : {}),
    ...(cause !== undefined ? { cause } : {}),
  };
  const said = `${provider} answered ${status}: ${message}`;
  const retryAfterMs = retryAfterMilliseconds(headers);
  const retryable = failure.isRetryable === false ? { isRetryable: false } : {};
  if (status === 401 || status === 403) {
    const hint = failure.credentialsHint ? ` Check ${failure.credentialsHint}.` : '';
    return new ModelAuthenticationError(`${said}.${hint}`, init);
  }
  if (status === 429) {
    const wait = retryAfterMs === undefined ? '' : ` It asked to wait ${retryAfterMs} ms.`;
    return new ModelRateLimitError(
      `${said}.${wait} Lower your request rate or raise your provider's limits.`,
      { ...init, ...retryable, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) },
    );
  }
  const text = `${errorCode ?? ''} ${message}`;
  if (status === 413 || contextOverflow.test(text)) {
    return new ModelContextOverflowError(
      `${said}. The conversation is longer than the model's context window: shorten the history or tool results, or use a model with a larger window.`,
      init,
    );
  }
  if (contentFilter.test(text)) {
    return new ModelContentFilterError(`${said}. The provider's content filter refused the request.`, init);
  }
  if (status === 408 || status === 409 || status >= 500) {
    return new ModelUnavailableError(`${said}. The provider could not answer; try again later.`, {
      ...init,
      ...retryable,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    });
  }
  return new ModelError(`${said}. Check the request options (model id, provider options).`, {
    ...init,
    code: 'MODEL_REQUEST_REJECTED',
  });
}

/** A connection that failed or timed out before the provider answered: retryable. */
export function modelConnectionError(provider: string, cause: unknown): ModelUnavailableError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new ModelUnavailableError(
    `Could not reach ${provider}: ${reason}. Check the network and the base URL.`,
    { provider, cause },
  );
}

/** A stream that broke its format, or ended without finishing: never a silent success. */
export function modelStreamError(provider: string, problem: string, cause?: unknown): ModelResponseError {
  return new ModelResponseError(`${provider}'s stream ${problem}; the answer is incomplete.`, {
    provider,
    ...(cause !== undefined ? { cause } : {}),
  });
}

/** The size bounds of {@link ModelStreamLimits}: each ends an answer with a `ModelResponseError`. */
export type ModelStreamSizeLimit = Exclude<keyof ModelStreamLimits, 'streamIdleTimeoutMs'>;

const sizeLimitCodes: Readonly<Record<ModelStreamSizeLimit, string>> = {
  maxToolCallsPerAnswer: 'MODEL_TOO_MANY_TOOL_CALLS',
  maxToolCallBytes: 'MODEL_TOOL_CALL_TOO_LARGE',
  maxAnswerBytes: 'MODEL_ANSWER_TOO_LARGE',
  maxStreamEventBytes: 'MODEL_STREAM_EVENT_TOO_LARGE',
};

/** `16 MiB (16,777,216 bytes)`, or the plain count under a KiB. */
function formatBytes(bytes: number): string {
  const exact = `${bytes.toLocaleString('en-US')} bytes`;
  if (bytes < 1024) return exact;
  const units = ['KiB', 'MiB', 'GiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${Number(value.toFixed(1))} ${units[unit]} (${exact})`;
}

/**
 * The error for a stream that crossed one of the size bounds of {@link ModelStreamLimits}: a
 * `ModelResponseError` whose code and `limit` name the bound (`maxToolCallsPerAnswer` →
 * `MODEL_TOO_MANY_TOOL_CALLS`, `maxToolCallBytes` → `MODEL_TOOL_CALL_TOO_LARGE`, `maxAnswerBytes`
 * → `MODEL_ANSWER_TOO_LARGE`, `maxStreamEventBytes` → `MODEL_STREAM_EVENT_TOO_LARGE`), and whose
 * message says what to raise. `value` is the bound's value.
 */
export function modelStreamLimitError(
  provider: string,
  limit: ModelStreamSizeLimit,
  value: number,
): ModelResponseError {
  const what = {
    maxToolCallsPerAnswer: `calls more than ${value.toLocaleString('en-US')} tools in one answer`,
    maxToolCallBytes: `sent a tool call whose arguments pass ${formatBytes(value)}`,
    maxAnswerBytes: `sent an answer longer than ${formatBytes(value)}`,
    maxStreamEventBytes: `sent a stream event longer than ${formatBytes(value)}`,
  }[limit];
  return new ModelResponseError(
    `${provider} ${what} (the limit ${limit}), so Ghost stopped reading its answer. If a real answer needs more, raise limits.${limit} of the agent.`,
    { provider, code: sizeLimitCodes[limit], limit },
  );
}
