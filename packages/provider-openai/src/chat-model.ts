import type { ModelRequest, ModelStreamOptions, ModelStreamPart, ModelV1 } from '@ghost/core';
import { retryModelRequest } from '@ghost/core/provider';
import type OpenAI from 'openai';
import { chatRequestBody } from './chat-request.js';
import { ChatStreamReader } from './chat-stream-reader.js';
import type { FailureContext } from './openai-failure.js';
import { streamAttempt } from './stream-attempt.js';

/** What a Chat Completions model needs. */
export interface ChatModelInit {
  /** The model's id as Ghost reports it (`modelId` of the model). */
  readonly modelId: string;
  /** The model name sent in the request body; default `modelId`. */
  readonly requestModelId?: string;
  /** The provider name on the model, its reasoning and its errors, such as `openai-chat`. */
  readonly provider: string;
  /** The `providerOptions` key merged into the body. */
  readonly optionsKey: string;
  /** OpenAI itself, rather than a compatible server. */
  readonly isOpenAI: boolean;
  readonly client: () => OpenAI;
  readonly failure: FailureContext;
  readonly maxRetries: number | undefined;
}

/** A model on the Chat Completions API (`POST /chat/completions`, streamed). */
export class OpenAIChatModel implements ModelV1 {
  readonly specificationVersion = 'model-v1';
  readonly provider: string;
  readonly modelId: string;
  readonly #init: ChatModelInit;

  constructor(init: ChatModelInit) {
    this.#init = init;
    this.provider = init.provider;
    this.modelId = init.modelId;
  }

  async *stream(request: ModelRequest, options: ModelStreamOptions): AsyncGenerator<ModelStreamPart> {
    const { signal } = options;
    signal.throwIfAborted();
    const client = this.#init.client();
    const body = chatRequestBody(request, {
      modelId: this.#init.requestModelId ?? this.modelId,
      optionsKey: this.#init.optionsKey,
      isOpenAI: this.#init.isOpenAI,
    });
    const { failure, maxRetries } = this.#init;
    yield* retryModelRequest(
      (attemptSignal) =>
        streamAttempt(
          (streamSignal) => client.chat.completions.create(body, { signal: streamSignal }),
          new ChatStreamReader(failure),
          attemptSignal,
          failure,
        ),
      { signal, ...(maxRetries !== undefined ? { maxRetries } : {}) },
    );
  }
}
