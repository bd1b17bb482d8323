import { ConfigurationError, type ModelV1 } from '@ghost/core';
import {
  defaultModelStreamLimits,
  type ModelRequest,
  type ModelStreamLimits,
  type ModelStreamPart,
  retryModelRequest,
} from '@ghost/core/provider';
import { aiSDKCallOptions } from './ai-sdk-call-options.js';
import { modelErrorFromAISDK } from './ai-sdk-error.js';
import type { AISDKLanguageModel, AISDKSpecificationVersion } from './ai-sdk-language-model.js';
import type { AISDKPromptTarget } from './ai-sdk-prompt.js';
import { type AISDKStreamContext, translateAISDKStream } from './ai-sdk-stream-translation.js';

/** Options of {@link fromAISDK}. */
export interface FromAISDKOptions {
  /**
   * Retries after the first attempt when the request fails before the answer starts (rate limits,
   * 5xx, lost connections), each shown as a `retry` part. Default 2; 0 turns retrying off.
   */
  readonly maxRetries?: number;
  /**
   * What a refused key should send the user to check, such as `MY_GATEWAY_KEY`. By default the
   * environment variable most AI SDK providers read: the provider's name in capitals followed by
   * `_API_KEY` (`OPENAI_API_KEY` for `openai.responses`).
   */
  readonly credentialsHint?: string;
}

const supportedVersions: readonly AISDKSpecificationVersion[] = ['v2', 'v3', 'v4'];
const optionNames: readonly string[] = ['maxRetries', 'credentialsHint'] satisfies (keyof FromAISDKOptions)[];

/**
 * Wraps a Vercel AI SDK language model as a Ghost model, so every AI SDK provider works with Ghost.
 * Takes models of specification `v3` (`ai@6`, `@ai-sdk/*` 3.x), `v2` (`ai@5`, 2.x) and `v4`
 * (`ai@7`, 4.x); anything else is a {@link ConfigurationError}.
 *
 * Each turn calls the model's `doStream` directly (not `ai`'s `streamText`), so Ghost's retry
 * policy is the only one: a failure before the answer starts is retried `maxRetries` times, each
 * announced by a `retry` part. Errors become the `ModelError` family (`ModelAuthenticationError`,
 * `ModelRateLimitError`, ...), and aborting the run's signal closes the HTTP stream at once.
 *
 * The AI SDK model reads its own HTTP response, so the bounds of the call's limits are applied to
 * the parts it produces, not to its bytes: an attempt that goes `streamIdleTimeoutMs` without a
 * part is given up (retried before the answer's first part), more tool calls than
 * `maxToolCallsPerAnswer` (provider-executed ones included) end the answer, and the agent ends the
 * stream, which closes the response, when the text, reasoning or arguments pass their bounds.
 *
 * @example
 * ```ts
 * import { createOpenAI } from '@ai-sdk/openai';
 * import { defineAgent } from '@ghost/core';
 * import { fromAISDK } from '@ghost/provider-ai-sdk';
 *
 * const openai = createOpenAI(); // reads OPENAI_API_KEY
 * const agent = defineAgent({ name: 'helper', instructions: 'Be brief.', model: fromAISDK(openai('gpt-5-mini')) });
 * const run = await agent.ask('What is the capital of France?');
 * ```
 */
export function fromAISDK(model: AISDKLanguageModel, options: FromAISDKOptions = {}): ModelV1 {
  const specificationVersion = checkedVersion(model);
  checkOptions(options);
  const { provider, modelId } = model;
  const target: AISDKPromptTarget = { specificationVersion, provider };
  const credentialsHint = options.credentialsHint ?? defaultCredentialsHint(provider);
  const maxRetries = options.maxRetries ?? 2;

  async function* streamOnce(
    request: ModelRequest,
    limits: ModelStreamLimits,
    signal: AbortSignal,
  ): AsyncGenerator<ModelStreamPart> {
    const context: AISDKStreamContext = { provider, credentialsHint, signal, limits };
    let stream: unknown;
    try {
      ({ stream } = await model.doStream(aiSDKCallOptions(request, target, signal)));
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      throw modelErrorFromAISDK(error, context);
    }
    if (!(stream instanceof ReadableStream)) {
      throw modelErrorFromAISDK(new TypeError('doStream resolved without a ReadableStream'), context);
    }
    yield* translateAISDKStream(stream, context);
  }

  return {
    specificationVersion: 'model-v1',
    provider,
    modelId,
    stream(request, { signal, limits = defaultModelStreamLimits }) {
      return retryModelRequest((attemptSignal) => streamOnce(request, limits, attemptSignal), {
        signal,
        maxRetries,
        idleTimeoutMs: limits.streamIdleTimeoutMs,
        provider,
      });
    },
  };
}

function checkedVersion(model: AISDKLanguageModel): AISDKSpecificationVersion {
  if (typeof model !== 'object' || model === null || typeof model.doStream !== 'function') {
    const given = typeof model === 'string' ? `the string '${model}'` : String(model);
    throw new ConfigurationError(
      `fromAISDK takes an AI SDK language model object, such as openai('gpt-5') from @ai-sdk/openai; it was given ${given}. Model id strings are resolved by the ai package (through the AI Gateway), not by fromAISDK: create the model with its provider package.`,
    );
  }
  const version = model.specificationVersion;
  if ((supportedVersions as readonly string[]).includes(version)) return version as AISDKSpecificationVersion;
  const upgrade =
    version === 'v1' || version === undefined
      ? ' Upgrade the provider package (@ai-sdk/* 2.x or later, with ai 5 or later).'
      : ' Use a provider package of a supported line, or a newer @ghost/provider-ai-sdk.';
  throw new ConfigurationError(
    `fromAISDK supports AI SDK language models of specification v2 (ai 5, @ai-sdk/* 2.x), v3 (ai 6, @ai-sdk/* 3.x) and v4 (ai 7, @ai-sdk/* 4.x); model '${model.modelId}' of provider '${model.provider}' has specification ${JSON.stringify(version)}.${upgrade}`,
    { option: 'specificationVersion', provider: model.provider, modelId: model.modelId },
  );
}

function checkOptions(options: FromAISDKOptions): void {
  for (const key of Object.keys(options)) {
    if (!optionNames.includes(key)) {
      throw new ConfigurationError(
        `fromAISDK has no option '${key}'. Its options are: ${optionNames.join(', ')}. Settings such as temperature belong to the agent's modelSettings, provider-specific ones to providerOptions.`,
      );
    }
  }
  const { maxRetries, credentialsHint } = options;
  if (maxRetries !== undefined && !(Number.isInteger(maxRetries) && maxRetries >= 0)) {
    throw new ConfigurationError(
      `fromAISDK's maxRetries must be a whole number, 0 or more; it is ${maxRetries}.`,
    );
  }
  if (credentialsHint !== undefined && typeof credentialsHint !== 'string') {
    throw new ConfigurationError("fromAISDK's credentialsHint must be a string, such as 'OPENAI_API_KEY'.");
  }
}

/** `openai.responses` → `OPENAI_API_KEY (or the apiKey given to the AI SDK provider)`. */
function defaultCredentialsHint(provider: string): string {
  const name = (provider.split('.')[0] ?? provider).toUpperCase().replace(/[^A-Z0-9]+/g, '_');
  return `${name}_API_KEY (or the apiKey given to the AI SDK provider)`;
}
