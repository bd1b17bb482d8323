import type { ModelV1 } from '@ghost/core';
import type { ModelRequest, ModelStreamOptions, ModelStreamPart } from '@ghost/core/provider';
import { defaultModelStreamLimits, type ModelStreamLimits, retryModelRequest } from '@ghost/core/provider';
import type OpenAI from 'openai';
import { withStreamLimits } from './limited-fetch.js';
import type { FailureContext } from './openai-failure.js';
import { type StreamEventReader, streamAttempt } from './stream-attempt.js';

/** What every model of this package needs, whichever API it streams from. */
export interface OpenAIModelInit {
  /** The model's id as Ghost reports it (`modelId` of the model). */
  readonly modelId: string;
  /** The provider name on the model, its reasoning and its errors, such as `openai`. */
  readonly provider: string;
  /** The `providerOptions` key merged into the body. */
  readonly optionsKey: string;
  readonly client: () => OpenAI;
  readonly failure: FailureContext;
  readonly maxRetries: number | undefined;
}

/** Opens one streamed request; called again for each retry, with that attempt's signal. */
export type OpenStream<Event> = (signal: AbortSignal) => Promise<AsyncIterable<Event>>;

/**
 * A model on one of OpenAI's streamed APIs: builds the request body once, then streams it with
 * Ghost's retries, each attempt read by a fresh reader of that API's events. The call's limits
 * bound the response as the client's fetch reads it (events, bytes), the reader's tables of tool
 * calls, and how long an attempt may go without a part.
 */
export abstract class OpenAIStreamingModel<Event, Init extends OpenAIModelInit = OpenAIModelInit>
  implements ModelV1
{
  readonly specificationVersion = 'model-v1';
  readonly provider: string;
  readonly modelId: string;
  protected readonly init: Init;

  constructor(init: Init) {
    this.init = init;
    this.provider = init.provider;
    this.modelId = init.modelId;
  }

  async *stream(request: ModelRequest, options: ModelStreamOptions): AsyncGenerator<ModelStreamPart> {
    const { signal, limits = defaultModelStreamLimits } = options;
    signal.throwIfAborted();
    const openRequest = this.openRequest(request, this.init.client());
    const open: OpenStream<Event> = (attemptSignal) =>
      withStreamLimits(limits, this.provider, () => openRequest(attemptSignal));
    const { failure, maxRetries } = this.init;
    yield* retryModelRequest(
      (attemptSignal) => streamAttempt(open, this.newReader(failure, limits), attemptSignal, failure),
      {
        signal,
        idleTimeoutMs: limits.streamIdleTimeoutMs,
        provider: this.provider,
        ...(maxRetries !== undefined ? { maxRetries } : {}),
      },
    );
  }

  /** Builds the request body for `request` and returns how to open it on `client`. */
  protected abstract openRequest(request: ModelRequest, client: OpenAI): OpenStream<Event>;

  /** A reader for one attempt's events, under the call's limits. */
  protected abstract newReader(failure: FailureContext, limits: ModelStreamLimits): StreamEventReader<Event>;
}
