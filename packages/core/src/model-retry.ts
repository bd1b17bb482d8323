import { WaitWatchdog } from './abort-race.js';
import { ModelError } from './errors.js';
import { defaultModelStreamLimits, type ModelStreamPart } from './model.js';
import { ModelRateLimitError, ModelUnavailableError } from './model-errors.js';

/** How a provider retries a request that failed before its first part. */
export interface ModelRetryPolicy {
  /** Retries after the first attempt. Default 2. */
  readonly maxRetries?: number;
  /** The first backoff; each retry doubles it, with jitter. Default 500 ms. */
  readonly initialDelayMs?: number;
  /** The longest backoff. Default 8,000 ms. */
  readonly maxDelayMs?: number;
  /** The longest `retry-after` honoured; a longer one fails at once. Default 60,000 ms. */
  readonly maxRetryAfterMs?: number;
}

/** The options of {@link retryModelRequest}. */
export interface RetryModelRequestOptions extends ModelRetryPolicy {
  /** The model call's signal: a retry never waits past an abort. */
  readonly signal: AbortSignal;
  /**
   * How long an attempt may go without a part, in milliseconds: pass the call's
   * `limits.streamIdleTimeoutMs`. Default: `defaultModelStreamLimits.streamIdleTimeoutMs`.
   */
  readonly idleTimeoutMs?: number | undefined;
  /** The provider's name, such as `openai`, for the error of an idle stream. */
  readonly provider?: string | undefined;
}

const defaults = { maxRetries: 2, initialDelayMs: 500, maxDelayMs: 8_000, maxRetryAfterMs: 60_000 };

/**
 * Opens a provider's stream, retrying a retryable failure (`ModelError.isRetryable`: rate limits,
 * 5xx, overload, lost connections) that happens before the stream's first part. Each retry is
 * announced by a `retry` part, so the run shows it as a `model_retry` event, and waits what the
 * provider's `retry-after` asked (up to `maxRetryAfterMs`) or an exponential backoff with jitter.
 * Once a part has been yielded nothing is retried: the model's answer has begun.
 *
 * Each attempt gets a signal of its own, linked to `signal`. An attempt that goes `idleTimeoutMs`
 * without a part (time the caller spends on a part does not count) is aborted with a
 * `ModelUnavailableError` of code `MODEL_STREAM_IDLE`: before the first part it is retried like a
 * lost connection, after it the stream ends with it. An abandoned attempt is told to stop, never
 * waited for, so a stream that ignores its signal cannot hold the caller.
 *
 * Providers disable their SDK's own retries and use this, so every provider retries the same way.
 *
 * @example
 * ```ts
 * async *stream(request, { signal, limits }) {
 *   yield* retryModelRequest((attemptSignal) => openMyStream(request, attemptSignal), {
 *     signal,
 *     maxRetries,
 *     idleTimeoutMs: limits?.streamIdleTimeoutMs,
 *     provider: 'my-provider',
 *   });
 * }
 * ```
 */
export async function* retryModelRequest(
  open: (signal: AbortSignal) => AsyncIterable<ModelStreamPart> | Promise<AsyncIterable<ModelStreamPart>>,
  options: RetryModelRequestOptions,
): AsyncGenerator<ModelStreamPart> {
  const { idleTimeoutMs = defaultModelStreamLimits.streamIdleTimeoutMs, provider } = options;
  const policy = { ...defaults, ...withoutUndefined(options) };
  const { signal } = options;
  const idleError = () => modelStreamIdleError(provider, idleTimeoutMs);
  for (let attempt = 1; ; attempt += 1) {
    signal.throwIfAborted();
    const watchdog = new WaitWatchdog(signal);
    let iterator: AsyncIterator<ModelStreamPart> | undefined;
    let first: IteratorResult<ModelStreamPart>;
    try {
      watchdog.arm(idleTimeoutMs, idleError);
      const opened = watchdog.race(Promise.resolve(open(watchdog.signal)));
      iterator = (await opened)[Symbol.asyncIterator]();
      first = await watchdog.race(iterator.next());
    } catch (error) {
      watchdog.dispose();
      stopWithoutWaiting(iterator);
      if (signal.aborted) throw signal.reason;
      const failure = watchdog.signal.aborted ? watchdog.signal.reason : error;
      const delayMs = retryDelay(failure, attempt, policy);
      if (delayMs === undefined) throw failure;
      yield { type: 'retry', attempt: attempt + 1, delayMs, error: failure as Error };
      await abortableDelay(delayMs, signal);
      continue;
    }
    watchdog.disarm();
    if (first.done) {
      watchdog.dispose();
      return;
    }
    try {
      yield first.value;
      for (;;) {
        watchdog.arm(idleTimeoutMs, idleError);
        const next = await watchdog.race(iterator.next());
        watchdog.disarm();
        if (next.done) return;
        yield next.value;
      }
    } finally {
      watchdog.dispose();
      // A stream that stalled or was aborted may never answer `return`: tell it, and go on.
      if (watchdog.signal.aborted) stopWithoutWaiting(iterator);
      else await iterator.return?.()?.catch(() => {});
    }
  }
}

function stopWithoutWaiting(iterator: AsyncIterator<ModelStreamPart> | undefined): void {
  iterator?.return?.()?.catch(() => {});
}

function withoutUndefined(policy: ModelRetryPolicy): ModelRetryPolicy {
  return Object.fromEntries(Object.entries(policy).filter(([, value]) => value !== undefined));
}

/** How long to wait before retrying after `error`, or `undefined` to give up. */
function retryDelay(error: unknown, attempt: number, policy: Required<ModelRetryPolicy>): number | undefined {
  if (!ModelError.isInstance(error) || !error.isRetryable || attempt > policy.maxRetries) return undefined;
  const asked =
    ModelRateLimitError.isInstance(error) || ModelUnavailableError.isInstance(error)
      ? error.retryAfterMs
      : undefined;
  if (asked !== undefined) return asked <= policy.maxRetryAfterMs ? asked : undefined;
  const backoff = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** (attempt - 1));
  // Up to a quarter less, so many clients that failed together do not retry together.
  return Math.round(backoff * (1 - Math.random() * 0.25));
}

function abortableDelay(milliseconds: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, milliseconds);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Reads how long a response asked to wait: `retry-after-ms`, then `retry-after` in seconds or as
 * an HTTP date. `undefined` when it did not say, or said something unreadable.
 */
export function retryAfterMilliseconds(
  headers: { get(name: string): string | null } | undefined,
  now = Date.now(),
): number | undefined {
  if (headers === undefined) return undefined;
  const milliseconds = Number.parseFloat(headers.get('retry-after-ms') ?? '');
  if (Number.isFinite(milliseconds) && milliseconds >= 0) return Math.round(milliseconds);
  const value = headers.get('retry-after');
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * The error for a stream that sent nothing for `streamIdleTimeoutMs`: a retryable
 * `ModelUnavailableError` with code `MODEL_STREAM_IDLE` (retried only before the answer's first
 * part, like a lost connection).
 */
export function modelStreamIdleError(
  provider: string | undefined,
  idleTimeoutMs: number,
): ModelUnavailableError {
  return new ModelUnavailableError(
    `${provider ?? 'The model'} sent nothing for ${idleTimeoutMs.toLocaleString('en-US')} ms (the limit streamIdleTimeoutMs), so Ghost gave up waiting for its answer. If the model thinks that long without streaming, raise limits.streamIdleTimeoutMs of the agent.`,
    {
      ...(provider !== undefined ? { provider } : {}),
      code: 'MODEL_STREAM_IDLE',
      limit: 'streamIdleTimeoutMs',
    },
  );
}
