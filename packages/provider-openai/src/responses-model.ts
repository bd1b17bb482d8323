import type { ModelRequest, ModelStreamOptions, ModelStreamPart, ModelV1 } from '@ghost/core';
import { retryModelRequest } from '@ghost/core/provider';
import type OpenAI from 'openai';
import type { FailureContext } from './openai-failure.js';
import { responsesRequestBody } from './responses-request.js';
import { ResponsesStreamReader } from './responses-stream-reader.js';
import { streamAttempt } from './stream-attempt.js';

/** What a Responses model needs besides its id. */
export interface ResponsesModelInit {
  readonly modelId: string;
  /** The provider name on the model, its reasoning and its errors, such as `openai`. */
  readonly provider: string;
  /** The `providerOptions` key merged into the body. */
  readonly optionsKey: string;
  readonly client: () => OpenAI;
  readonly failure: FailureContext;
  readonly maxRetries: number | undefined;
}

/** A model on OpenAI's Responses API (`POST /responses`, streamed). */
export class OpenAIResponsesModel implements ModelV1 {
  readonly specificationVersion = 'model-v1';
  readonly provider: string;
  readonly modelId: string;
  readonly #init: ResponsesModelInit;

  constructor(init: ResponsesModelInit) {
    this.#init = init;
    this.provider = init.provider;
    this.modelId = init.modelId;
  }

  async *stream(request: ModelRequest, options: ModelStreamOptions): AsyncGenerator<ModelStreamPart> {
    const { signal } = options;
    signal.throwIfAborted();
    const client = this.#init.client();
    const body = responsesRequestBody(request, {
      modelId: this.modelId,
      provider: this.provider,
      optionsKey: this.#init.optionsKey,
    });
    const { failure, maxRetries } = this.#init;
    yield* retryModelRequest(
      (attemptSignal) =>
        streamAttempt(
          (streamSignal) => client.responses.create(body, { signal: streamSignal }),
          new ResponsesStreamReader(failure),
          attemptSignal,
          failure,
        ),
      { signal, ...(maxRetries !== undefined ? { maxRetries } : {}) },
    );
  }
}
