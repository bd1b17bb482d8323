import Anthropic from '@anthropic-ai/sdk';
import {
  ModelAuthenticationError,
  ModelContextOverflowError,
  ModelError,
  ModelRateLimitError,
  ModelResponseError,
  ModelUnavailableError,
  modelConnectionError,
  modelErrorFromHttp,
  modelStreamError,
} from '@ghost/core/provider';

/** The provider name in messages and error details. */
export const providerName = 'anthropic';

/** What a user sets when Anthropic refuses the credentials or none were given. */
const credentialsHint = 'ANTHROPIC_API_KEY or the apiKey option of createAnthropic()';

/**
 * Where a failure happened: `request` before any part of the answer was produced (a lost
 * connection may then be retried), `stream` after (the answer is incomplete).
 */
export type FailurePhase = 'request' | 'stream';

/**
 * A connection that failed or dropped. SDK releases before 1.17 let Node's own error through when
 * a body is cut mid-read (`TypeError: terminated`); later ones wrap it in `APIConnectionError`.
 */
function isConnectionLoss(error: unknown): boolean {
  if (error instanceof Anthropic.APIConnectionError) return true;
  return (
    error instanceof TypeError && /terminated|fetch failed|other side closed|socket/i.test(error.message)
  );
}

interface AnthropicErrorBody {
  readonly type?: unknown;
  readonly message?: unknown;
}

/** The `error` object of an Anthropic error body (`{ type: 'error', error: { type, message } }`). */
function errorBody(error: InstanceType<typeof Anthropic.APIError>): AnthropicErrorBody {
  const body = error.error as { error?: unknown } | undefined;
  const inner = body?.error;
  return typeof inner === 'object' && inner !== null ? (inner as AnthropicErrorBody) : {};
}

function errorType(error: InstanceType<typeof Anthropic.APIError>): string | undefined {
  const type = error.type ?? errorBody(error).type;
  return typeof type === 'string' ? type : undefined;
}

function apiMessage(error: InstanceType<typeof Anthropic.APIError>): string {
  const message = errorBody(error).message;
  return typeof message === 'string' && message !== '' ? message : error.message;
}

/**
 * Turns whatever the SDK threw into the `ModelError` a user can act on. HTTP failures go through
 * core's `modelErrorFromHttp` (so 529 overloaded is a retryable `ModelUnavailableError`); an
 * `error` event inside a 200 stream is mapped by its type; a connection lost before the answer
 * began is retryable, one lost during it leaves the answer incomplete (`ModelResponseError`).
 */
export function modelErrorFromAnthropic(error: unknown, phase: FailurePhase): ModelError {
  if (ModelError.isInstance(error)) return error;
  if (error instanceof Error && error.name === 'CredentialsError') {
    // A client the user configured found no credentials (SDK 1.17 and later name the error so).
    return new ModelAuthenticationError(`${providerName} has no credentials: ${error.message}`, {
      provider: providerName,
      cause: error,
    });
  }
  if (isConnectionLoss(error)) {
    return phase === 'request'
      ? modelConnectionError(providerName, error)
      : modelStreamError(providerName, `was cut off (${(error as Error).message})`, error);
  }
  if (error instanceof Anthropic.APIError) {
    if (error.status !== undefined) {
      const type = errorType(error);
      return modelErrorFromHttp({
        provider: providerName,
        status: error.status,
        message: apiMessage(error),
        ...(type !== undefined ? { errorCode: type } : {}),
        ...(error.headers !== undefined ? { headers: error.headers } : {}),
        credentialsHint,
        cause: error,
      });
    }
    return streamErrorEvent(error);
  }
  if (error instanceof SyntaxError) {
    return modelStreamError(providerName, `sent an event that is not JSON (${error.message})`, error);
  }
  const reason = error instanceof Error ? error.message : String(error);
  return new ModelError(`${providerName} failed: ${reason}`, {
    provider: providerName,
    cause: error,
  });
}

const contextOverflow = /prompt is too long|context.?window|too many tokens|input is too long/i;

/**
 * An `event: error` in a stream that began with HTTP 200, such as
 * `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`. Its type says
 * whether trying again may help; the retry policy retries it only before the first part.
 */
function streamErrorEvent(error: InstanceType<typeof Anthropic.APIError>): ModelError {
  const type = errorType(error) ?? 'unknown_error';
  const message = apiMessage(error);
  const requestId = error.headers?.get('request-id') ?? undefined;
  const init = {
    provider: providerName,
    ...(requestId ? { requestId } : {}),
    errorType: type,
    cause: error,
  };
  const said = `${providerName}'s stream reported ${type}: ${message}.`;
  switch (type) {
    case 'overloaded_error':
    case 'api_error':
    case 'timeout_error':
      return new ModelUnavailableError(`${said} The provider could not answer; try again later.`, init);
    case 'rate_limit_error':
      return new ModelRateLimitError(
        `${said} Lower your request rate or raise your provider's limits.`,
        init,
      );
    case 'authentication_error':
    case 'permission_error':
      return new ModelAuthenticationError(`${said} Check ${credentialsHint}.`, init);
    case 'request_too_large':
      return new ModelContextOverflowError(
        `${said} Shorten the conversation or tool results, or use a model with a larger window.`,
        init,
      );
    default:
      if (contextOverflow.test(message)) {
        return new ModelContextOverflowError(
          `${said} Shorten the conversation or tool results, or use a model with a larger window.`,
          init,
        );
      }
      return new ModelResponseError(`${said} The answer is incomplete.`, init);
  }
}
