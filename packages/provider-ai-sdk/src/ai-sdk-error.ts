import {
  ModelAuthenticationError,
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

/** Who failed, for the messages. */
export interface AISDKErrorContext {
  /** The model's `provider`, such as `openai.responses`. */
  readonly provider: string;
  /** What to check when credentials are refused, such as `OPENAI_API_KEY`. */
  readonly credentialsHint: string;
}

/** The fields of the AI SDK's `APICallError` that say what the provider answered. */
interface APICallErrorFields {
  readonly message: string;
  readonly statusCode?: number;
  readonly responseHeaders?: Record<string, string>;
  readonly isRetryable?: boolean;
  readonly data?: unknown;
}

/**
 * True when `error` carries the AI SDK's marker for `name` (such as `AI_APICallError`). The AI SDK
 * marks its errors with a global symbol so that `isInstance` works across installed copies; reading
 * the same marker needs no runtime dependency on `@ai-sdk/provider`.
 */
function isAISDKError(error: unknown, name: string): error is Error & Record<string, unknown> {
  if (typeof error !== 'object' || error === null) return false;
  return (error as Record<symbol, unknown>)[Symbol.for(`vercel.ai.error.${name}`)] === true;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'object' && error !== null) {
    const message = (error as { message?: unknown }).message;
    if (typeof message === 'string') return message;
  }
  return typeof error === 'string' ? error : (JSON.stringify(error) ?? String(error));
}

/**
 * Maps whatever an AI SDK model threw from `doStream`, or sent as an `error` part, to the
 * `ModelError` family: an `APICallError` with a status goes through `modelErrorFromHttp` (with the
 * response headers, so `retry-after` is honoured, and the SDK's own `isRetryable`), one without a
 * status is a connection failure, a missing key is a {@link ModelAuthenticationError}, unreadable
 * chunks are a {@link ModelResponseError}, and an error event from the provider's stream is
 * classified by its type and message.
 */
export function modelErrorFromAISDK(error: unknown, context: AISDKErrorContext): ModelError {
  if (ModelError.isInstance(error)) return error;
  const { provider } = context;
  if (isAISDKError(error, 'AI_APICallError'))
    return fromAPICallError(error as APICallErrorFields, error, context);
  if (isAISDKError(error, 'AI_LoadAPIKeyError')) {
    // Thrown before any request: its message names the option and the environment variable.
    return new ModelAuthenticationError(`${provider}: ${error.message}`, { provider, cause: error });
  }
  if (
    isAISDKError(error, 'AI_JSONParseError') ||
    isAISDKError(error, 'AI_TypeValidationError') ||
    isAISDKError(error, 'AI_EmptyResponseBodyError')
  ) {
    return modelStreamError(provider, `could not be read (${error.message})`, error);
  }
  if (
    isAISDKError(error, 'AI_InvalidPromptError') ||
    isAISDKError(error, 'AI_UnsupportedFunctionalityError') ||
    isAISDKError(error, 'AI_InvalidArgumentError')
  ) {
    return new ModelError(
      `${provider} cannot take this request: ${error.message}. Check the messages (image and file parts) and the provider options.`,
      { code: 'MODEL_REQUEST_REJECTED', provider, cause: error },
    );
  }
  if (error instanceof Error) {
    return new ModelError(`${provider} failed: ${error.message}`, { provider, cause: error });
  }
  return modelErrorFromStreamEvent(error, provider);
}

function fromAPICallError(
  fields: APICallErrorFields,
  error: unknown,
  context: AISDKErrorContext,
): ModelError {
  const { provider } = context;
  if (fields.statusCode === undefined) {
    // The AI SDK reports a request that never got an answer (refused connection, reset) this way.
    return fields.isRetryable === false
      ? new ModelError(`${provider} failed: ${fields.message}`, { provider, cause: error })
      : modelConnectionError(provider, error);
  }
  if (fields.statusCode < 400) {
    // The AI SDK's report of a response that began well and then broke (the connection dropped
    // mid-stream): the answer is incomplete.
    const cause = (error as { cause?: unknown }).cause;
    const reason = cause instanceof Error ? cause.message : fields.message;
    return modelStreamError(provider, `broke off (${reason})`, error);
  }
  const errorCode = providerErrorCode(fields.data);
  return modelErrorFromHttp({
    provider,
    status: fields.statusCode,
    message: fields.message,
    ...(errorCode !== undefined ? { errorCode } : {}),
    ...(fields.responseHeaders !== undefined ? { headers: new Headers(fields.responseHeaders) } : {}),
    ...(fields.isRetryable !== undefined ? { isRetryable: fields.isRetryable } : {}),
    credentialsHint: context.credentialsHint,
    cause: error,
  });
}

/** The provider's error code or type from the parsed error body (`{ error: { code, type } }` or `{ type }`). */
function providerErrorCode(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const record = data as Record<string, unknown>;
  const inner = typeof record.error === 'object' && record.error !== null ? record.error : record;
  const { code, type } = inner as Record<string, unknown>;
  if (typeof code === 'string' || typeof code === 'number') return String(code);
  return typeof type === 'string' ? type : undefined;
}

const rateLimited = /rate.?limit|too many requests/i;
const unavailable = /overload|server.?error|api.?error|unavailable|internal|timeout|timed out/i;
const contextOverflow =
  /context.?length|context.?window|too many tokens|maximum context|prompt is too long|input is too long/i;
const contentFiltered = /content.?(filter|policy|management)|safety/i;
const unauthenticated = /authentication|invalid.?api.?key|permission/i;

/**
 * An error event the provider sent inside a stream that had started (its HTTP status was 200):
 * the provider's own payload (`{ type, code, message }`), classified by its words.
 */
function modelErrorFromStreamEvent(event: unknown, provider: string): ModelError {
  const message = messageOf(event);
  const code = providerErrorCode(event) ?? '';
  const text = `${code} ${message}`;
  const said = `${provider} reported an error in its stream: ${message}`;
  const init = { provider, cause: event };
  if (rateLimited.test(text)) return new ModelRateLimitError(`${said}. Lower your request rate.`, init);
  if (contextOverflow.test(text)) {
    return new ModelContextOverflowError(
      `${said}. The conversation is longer than the model's context window: shorten it or use a larger model.`,
      init,
    );
  }
  if (contentFiltered.test(text)) {
    return new ModelContentFilterError(`${said}. The provider's content filter stopped the answer.`, init);
  }
  if (unauthenticated.test(text)) return new ModelAuthenticationError(`${said}.`, init);
  if (unavailable.test(text)) return new ModelUnavailableError(`${said}. Try again later.`, init);
  return new ModelResponseError(`${said}; the answer is incomplete.`, init);
}
