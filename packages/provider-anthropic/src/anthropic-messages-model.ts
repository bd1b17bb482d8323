import type Anthropic from '@anthropic-ai/sdk';
import type { ModelV1 } from '@ghost/core';
import type { ModelRequest, ModelStreamOptions, ModelStreamPart } from '@ghost/core/provider';
import {
  defaultModelStreamLimits,
  type ModelStreamLimits,
  modelStreamError,
  retryModelRequest,
} from '@ghost/core/provider';
import { modelErrorFromAnthropic, providerName } from './anthropic-error-mapping.js';
import { type AnthropicRequestBody, anthropicRequestBody } from './anthropic-request-body.js';
import { AnthropicStreamMapper } from './anthropic-stream-mapper.js';
import { withStreamLimits } from './limited-fetch.js';

/** What an {@link AnthropicMessagesModel} needs from its provider. */
export interface AnthropicMessagesModelConfig {
  /**
   * The SDK client, with the SDK's own retries off. Called at each request, so a missing API key
   * fails then, before anything is sent, with a `ModelAuthenticationError`.
   */
  readonly client: () => Anthropic;
  /** Retries before the answer's first part. Default: core's policy (2). */
  readonly maxRetries: number | undefined;
  /** Prompt caching unless a request's provider options turn it off. */
  readonly isCacheOn: boolean;
}

/**
 * A Claude model on Anthropic's Messages API, streaming. Made by `anthropic('claude-...')`; see
 * `anthropicRequestBody` for what is sent and `AnthropicStreamMapper` for how the answer is read.
 * Failures are `ModelError`s; those before the first part that may pass (rate limits, 5xx, 529
 * overloaded, an `overloaded_error` event, a lost connection) are retried by core's policy, each
 * announced by a `retry` part. Aborting the signal closes the HTTP stream at once. The call's
 * limits bound the response as the client's fetch reads it (events, bytes), the tool calls of an
 * answer, and how long an attempt may go without a part.
 */
export class AnthropicMessagesModel implements ModelV1 {
  readonly specificationVersion = 'model-v1';
  readonly provider = providerName;
  readonly modelId: string;
  readonly #config: AnthropicMessagesModelConfig;

  constructor(modelId: string, config: AnthropicMessagesModelConfig) {
    this.modelId = modelId;
    this.#config = config;
  }

  async *stream(request: ModelRequest, options: ModelStreamOptions): AsyncGenerator<ModelStreamPart> {
    const { signal, limits = defaultModelStreamLimits } = options;
    signal.throwIfAborted();
    const client = this.#config.client();
    const body = anthropicRequestBody(this.modelId, request, this.#config.isCacheOn);
    const { maxRetries } = this.#config;
    yield* retryModelRequest((attemptSignal) => openStream(client, body, limits, attemptSignal), {
      signal,
      idleTimeoutMs: limits.streamIdleTimeoutMs,
      provider: providerName,
      ...(maxRetries !== undefined ? { maxRetries } : {}),
    });
  }
}

async function* openStream(
  client: Anthropic,
  body: AnthropicRequestBody,
  limits: ModelStreamLimits,
  signal: AbortSignal,
): AsyncGenerator<ModelStreamPart> {
  let events: AsyncIterable<Anthropic.RawMessageStreamEvent>;
  try {
    events = await withStreamLimits(limits, providerName, () => client.messages.create(body, { signal }));
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    throw modelErrorFromAnthropic(error, 'request');
  }
  const mapper = new AnthropicStreamMapper(limits);
  try {
    for await (const event of events) {
      for (const part of mapper.push(event)) yield part;
      // Leaving the loop closes the response; nothing after message_stop is read.
      if (mapper.isFinished) return;
    }
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    throw modelErrorFromAnthropic(error, mapper.hasContent ? 'stream' : 'request');
  }
  // The SDK ends the iteration quietly when the request was aborted.
  if (signal.aborted) throw signal.reason;
  throw modelStreamError(providerName, 'ended before message_stop');
}
