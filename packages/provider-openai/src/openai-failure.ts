import {
  ModelContentFilterError,
  ModelContextOverflowError,
  ModelError,
  ModelRateLimitError,
  ModelResponseError,
  ModelUnavailableError,
  modelConnectionError,
  modelErrorFromHttp,
  modelStreamError,
} from '@ghost/core/provider';
import { APIConnectionError, APIError, APIUserAbortError } from 'openai';

/** Who failed, for error messages: the provider's name and what to set when its key is refused. */
export interface FailureContext {
  /** The provider's name, such as `openai` or `ollama`. */
  readonly provider: string;
  /** What to check when the credentials are refused, such as `OPENAI_API_KEY`. */
  readonly credentialsHint?: string;
}

interface HttpFailureLike {
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  readonly error?: unknown;
  readonly message: string;
}

// Checked by shape as well as by class, so a client from another installed copy of the SDK (one
// the user configured and passed in) is understood too.
function isHttpFailure(error: unknown): error is HttpFailureLike {
  if (typeof error !== 'object' || error === null) return false;
  const { status, headers } = error as { status?: unknown; headers?: { get?: unknown } };
  return typeof status === 'number' && typeof headers?.get === 'function';
}

function className(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null ? error.constructor?.name : undefined;
}

function isConnectionFailure(error: unknown): boolean {
  const name = className(error);
  return (
    error instanceof APIConnectionError ||
    name === 'APIConnectionError' ||
    name === 'APIConnectionTimeoutError'
  );
}

function isUserAbort(error: unknown): boolean {
  return error instanceof APIUserAbortError || className(error) === 'APIUserAbortError';
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

function stringField(value: unknown, key: string): string | undefined {
  const found = field(value, key);
  return typeof found === 'string' && found !== '' ? found : undefined;
}

/**
 * A failure the provider reported inside its stream (a Responses `error` event, a failed
 * response, a Chat chunk carrying `error`): there is no HTTP status, so the error code and
 * message decide which `ModelError` a user sees.
 */
export function modelErrorFromStreamFailure(
  context: FailureContext,
  failure: { readonly code?: string | null | undefined; readonly message?: string | null | undefined },
  cause?: unknown,
): ModelError {
  const { provider } = context;
  const code = failure.code ?? undefined;
  const message = failure.message || 'no message';
  const said = `${provider} failed the response${code ? ` (${code})` : ''}: ${message}`;
  const text = `${code ?? ''} ${message}`;
  const init = { provider, ...(cause !== undefined ? { cause } : {}) };
  if (/rate.?limit/i.test(text)) {
    return new ModelRateLimitError(`${said}. Lower your request rate or raise your provider's limits.`, init);
  }
  if (/context.?length|context.?window|too many tokens|maximum context/i.test(text)) {
    return new ModelContextOverflowError(
      `${said}. The conversation is longer than the model's context window: shorten the history or tool results, or use a model with a larger window.`,
      init,
    );
  }
  if (/content.?(filter|policy)|safety|bio_policy/i.test(text)) {
    return new ModelContentFilterError(`${said}. The provider's content filter stopped the answer.`, init);
  }
  if (/server.?error|overloaded|unavailable|timeout|timed out/i.test(text)) {
    return new ModelUnavailableError(`${said}. The provider could not answer; try again later.`, init);
  }
  return new ModelResponseError(`${said}.`, init);
}

/**
 * Maps what the SDK threw while opening a request (before any event arrived) to the
 * `ModelError` family: HTTP failures through `modelErrorFromHttp`, lost connections and
 * timeouts through `modelConnectionError`. An abort rethrows the signal's reason.
 */
export function openFailure(error: unknown, signal: AbortSignal, context: FailureContext): unknown {
  if (signal.aborted) return signal.reason;
  if (ModelError.isInstance(error)) return error;
  if (isHttpFailure(error)) {
    const body = error.error;
    const message = stringField(body, 'message') ?? error.message;
    const errorCode = stringField(body, 'code') ?? stringField(body, 'type');
    return modelErrorFromHttp({
      provider: context.provider,
      status: error.status,
      message,
      headers: error.headers,
      cause: error,
      ...(errorCode !== undefined ? { errorCode } : {}),
      ...(context.credentialsHint !== undefined ? { credentialsHint: context.credentialsHint } : {}),
    });
  }
  if (isConnectionFailure(error) || isUserAbort(error)) return modelConnectionError(context.provider, error);
  return error;
}

/**
 * Maps what broke while reading a stream: an error body inside it, an event that is not JSON,
 * a connection cut mid-answer. Each is a `ModelError`; nothing here is ever a success.
 */
export function streamFailure(error: unknown, signal: AbortSignal, context: FailureContext): unknown {
  if (signal.aborted) return signal.reason;
  if (ModelError.isInstance(error)) return error;
  if (isHttpFailure(error)) return openFailure(error, signal, context);
  const body = field(error, 'error');
  const isErrorBody = error instanceof APIError || className(error) === 'APIError';
  if (isErrorBody && typeof body === 'object' && body !== null) {
    // The SDK throws an APIError without a status when a chunk carries `error`.
    return modelErrorFromStreamFailure(
      context,
      { code: stringField(body, 'code') ?? stringField(body, 'type'), message: stringField(body, 'message') },
      error,
    );
  }
  if (error instanceof SyntaxError) {
    return modelStreamError(context.provider, 'sent an event that is not valid JSON', error);
  }
  const reason = error instanceof Error ? error.message : String(error);
  return modelStreamError(context.provider, `broke off mid-answer (${reason})`, error);
}
