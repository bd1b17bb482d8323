import type { ModelRequest, ModelStreamLimits } from '@ghost/core/provider';
import type OpenAI from 'openai';
import type { FailureContext } from './openai-failure.js';
import { OpenAIStreamingModel, type OpenStream } from './openai-streaming-model.js';
import { responsesRequestBody } from './responses-request.js';
import { ResponsesStreamReader } from './responses-stream-reader.js';

/** A model on OpenAI's Responses API (`POST /responses`, streamed). */
export class OpenAIResponsesModel extends OpenAIStreamingModel<OpenAI.Responses.ResponseStreamEvent> {
  protected openRequest(
    request: ModelRequest,
    client: OpenAI,
  ): OpenStream<OpenAI.Responses.ResponseStreamEvent> {
    const body = responsesRequestBody(request, {
      modelId: this.modelId,
      provider: this.provider,
      optionsKey: this.init.optionsKey,
    });
    return (signal) => client.responses.create(body, { signal });
  }

  protected newReader(failure: FailureContext, limits: ModelStreamLimits): ResponsesStreamReader {
    return new ResponsesStreamReader(failure, limits);
  }
}
