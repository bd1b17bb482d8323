import type { ModelRequest, ModelStreamLimits } from '@ghost/core/provider';
import type OpenAI from 'openai';
import { chatRequestBody } from './chat-request.js';
import { ChatStreamReader } from './chat-stream-reader.js';
import type { FailureContext } from './openai-failure.js';
import { type OpenAIModelInit, OpenAIStreamingModel, type OpenStream } from './openai-streaming-model.js';

/** What a Chat Completions model needs. */
export interface ChatModelInit extends OpenAIModelInit {
  /** The model name sent in the request body; default `modelId`. */
  readonly requestModelId?: string;
  /** OpenAI itself, rather than a compatible server. */
  readonly isOpenAI: boolean;
}

/** A model on the Chat Completions API (`POST /chat/completions`, streamed). */
export class OpenAIChatModel extends OpenAIStreamingModel<OpenAI.Chat.ChatCompletionChunk, ChatModelInit> {
  protected openRequest(request: ModelRequest, client: OpenAI): OpenStream<OpenAI.Chat.ChatCompletionChunk> {
    const body = chatRequestBody(request, {
      modelId: this.init.requestModelId ?? this.modelId,
      optionsKey: this.init.optionsKey,
      isOpenAI: this.init.isOpenAI,
    });
    return (signal) => client.chat.completions.create(body, { signal });
  }

  protected newReader(failure: FailureContext, limits: ModelStreamLimits): ChatStreamReader {
    return new ChatStreamReader(failure, limits);
  }
}
