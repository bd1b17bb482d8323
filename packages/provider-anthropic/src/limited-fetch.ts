import { AsyncLocalStorage } from 'node:async_hooks';
import {
  defaultModelStreamLimits,
  limitServerSentEvents,
  type ModelStreamLimits,
} from '@ghost/core/provider';

/** The model call whose request is being opened: its limits, and its provider for errors. */
interface ModelCall {
  readonly limits: ModelStreamLimits;
  readonly provider: string;
}

const currentCall = new AsyncLocalStorage<ModelCall>();

/**
 * Opens a request with `limits` for every response the SDK fetches while opening it. The SDK
 * calls its fetch from `open`'s own chain of promises, so the limits reach it without a client per
 * call.
 */
export function withStreamLimits<Result>(
  limits: ModelStreamLimits,
  provider: string,
  open: () => Result,
): Result {
  return currentCall.run({ limits, provider }, open);
}

/**
 * Wraps the fetch an SDK client uses, so every response body is read under the limits of the
 * call that asked for it (see {@link withStreamLimits}; the defaults otherwise): one whole
 * server-sent event at a time, ended with a `ModelResponseError` as soon as an event passes
 * `maxStreamEventBytes` or the body passes `maxAnswerBytes`. The SDK reads what this hands it, so
 * nothing past a bound is ever buffered by it. An error body, which has no events, is bounded by
 * `maxStreamEventBytes` as a whole.
 */
export function limitedFetch(fetch: typeof globalThis.fetch, provider: string): typeof globalThis.fetch {
  return async (input, init) => {
    const call = currentCall.getStore() ?? { limits: defaultModelStreamLimits, provider };
    const response = await fetch(input, init);
    // A fetch of the user's may return a body that is not a web stream; the SDK reads it as it is.
    if (!(response.body instanceof ReadableStream)) return response;
    const limited = new Response(limitServerSentEvents(response.body, call.limits, call.provider), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
    // The SDK logs the URL; a new Response has none of its own.
    Object.defineProperty(limited, 'url', { value: response.url });
    return limited;
  };
}
