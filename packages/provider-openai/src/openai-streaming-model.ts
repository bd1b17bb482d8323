import type { ModelRequest, ModelStreamOptions, ModelStreamPart, ModelV1 } from '@ghost/core';
import { retryModelRequest } from '@ghost/core/provider';
import type OpenAI from 'openai';
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
 * Ghost's retries, each attempt read by a fresh reader of that API's events.
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
    const { signal } = options;
    signal.throwIfAborted();
    const open = this.openRequest(request, this.init.client());
    const { failure, maxRetries } = this.init;
    yield* retryModelRequest(
      (attemptSignal) => streamAttempt(open, this.newReader(failure), attemptSignal, failure),
      { signal, ...(maxRetries !== undefined ? { maxRetries } : {}) },
    );
  }

  /** Builds the request body for `request` and returns how to open it on `client`. */
  protected abstract openRequest(request: ModelRequest, client: OpenAI): OpenStream<Event>;

  /** A reader for one attempt's events. */
  protected abstract newReader(failure: FailureContext): StreamEventReader<Event>;
}
