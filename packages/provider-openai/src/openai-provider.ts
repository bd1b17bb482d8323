import type { ModelV1 } from '@ghost/core';
import { defineModelProvider, type ModelProviderV1 } from '@ghost/core/provider';
import type OpenAI from 'openai';
import { OpenAIChatModel } from './chat-model.js';
import { checkModelId, checkSettings } from './check-settings.js';
import { type ClientFlavour, checkClientSettings, lazyClient } from './openai-client.js';
import type { FailureContext } from './openai-failure.js';
import { OpenAIResponsesModel } from './responses-model.js';

/** The options of {@link createOpenAI}. Every one is optional. */
export interface OpenAIProviderSettings {
  /** The API key. Default: the `OPENAI_API_KEY` environment variable, read at the first request. */
  readonly apiKey?: string;
  /** The API's base URL. Default: `OPENAI_BASE_URL`, else `https://api.openai.com/v1`. */
  readonly baseURL?: string;
  /** Sent as `OpenAI-Organization`. Default: `OPENAI_ORG_ID` when set. */
  readonly organization?: string;
  /** Sent as `OpenAI-Project`. Default: `OPENAI_PROJECT_ID` when set. */
  readonly project?: string;
  /** Headers sent with every request. */
  readonly headers?: Readonly<Record<string, string>>;
  /** A `fetch` to use instead of the global one (a proxy, a test double). */
  readonly fetch?: typeof globalThis.fetch;
  /**
   * A client you configured yourself (`new OpenAI({ ... })`). Ghost uses a copy with the SDK's
   * own retries turned off; give the key, URL and headers to the client, not here.
   */
  readonly client?: OpenAI;
  /**
   * Retries of a request that failed before its answer began (rate limits, 5xx, lost
   * connections), each reported as a `retry` part. Default 2. The SDK's own retries are off.
   */
  readonly maxRetries?: number;
  /** How long to wait for the server to start answering, in milliseconds. Default: the SDK's 10 minutes. */
  readonly timeoutMs?: number;
}

/**
 * OpenAI's models, made by {@link createOpenAI}. Call it with a model id for a model on the
 * Responses API; `.chat(id)` gives one on Chat Completions. `.plugin` and `.chatPlugin`
 * register it with a runtime.
 */
export interface OpenAIProvider {
  /** A model on the Responses API, such as `openai('gpt-5')`. */
  (modelId: string): ModelV1;
  /** A model on the Responses API; the same as calling the provider. */
  responses(modelId: string): ModelV1;
  /** A model on the Chat Completions API, such as `openai.chat('gpt-4.1')`. */
  chat(modelId: string): ModelV1;
  /**
   * This provider as a registry plugin named `openai` (Responses models), for
   * `createRuntime({ models: [myOpenAI.plugin] })` and model ids such as `'openai:gpt-5'`.
   */
  readonly plugin: ModelProviderV1;
  /** This provider's Chat Completions models as a registry plugin named `openai-chat`. */
  readonly chatPlugin: ModelProviderV1;
}

const settingKinds = {
  apiKey: 'string',
  baseURL: 'string',
  organization: 'string',
  project: 'string',
  headers: 'headers',
  fetch: 'function',
  client: 'client',
  maxRetries: 'count',
  timeoutMs: 'milliseconds',
} as const;

const credentialsHint = 'OPENAI_API_KEY or the apiKey option of createOpenAI()';

/**
 * Creates an OpenAI provider on the official `openai` SDK. Nothing is read or checked at
 * creation beyond the options' shapes: the key (`apiKey`, else `OPENAI_API_KEY`) is read at the
 * first request, and a missing one fails then with a `ModelAuthenticationError`, before
 * anything is sent.
 *
 * Requests stream. Failures become Ghost's `ModelError` family (`ModelAuthenticationError`,
 * `ModelRateLimitError`, `ModelContextOverflowError`, `ModelContentFilterError`,
 * `ModelUnavailableError`, `ModelResponseError`), and a request that fails before its answer
 * begins is retried up to `maxRetries` times, each retry visible as a `model_retry` event.
 *
 * @example
 * ```ts
 * import { defineAgent } from '@ghost/core';
 * import { createOpenAI } from '@ghost/provider-openai';
 *
 * const openai = createOpenAI({ apiKey: process.env.MY_OPENAI_KEY });
 * const agent = defineAgent({ name: 'helper', model: openai('gpt-5') });
 * const legacy = openai.chat('gpt-4.1'); // Chat Completions
 * ```
 */
export function createOpenAI(settings: OpenAIProviderSettings = {}): OpenAIProvider {
  checkSettings(settings, settingKinds, 'createOpenAI');
  const flavour: ClientFlavour = { provider: 'openai', factoryName: 'createOpenAI', isOpenAI: true };
  checkClientSettings(settings, flavour);
  const client = lazyClient(settings, flavour);
  const { maxRetries } = settings;

  const responses = (modelId: string): ModelV1 => {
    checkModelId(modelId, 'openai');
    const failure: FailureContext = { provider: 'openai', credentialsHint };
    return new OpenAIResponsesModel({
      modelId,
      provider: 'openai',
      optionsKey: 'openai',
      client,
      failure,
      maxRetries,
    });
  };
  const chat = (modelId: string): ModelV1 => {
    checkModelId(modelId, 'openai-chat');
    const failure: FailureContext = { provider: 'openai-chat', credentialsHint };
    return new OpenAIChatModel({
      modelId,
      provider: 'openai-chat',
      optionsKey: 'openai',
      isOpenAI: true,
      client,
      failure,
      maxRetries,
    });
  };
  const plugin = defineModelProvider({
    kind: 'model',
    specificationVersion: 'model-v1',
    name: 'openai',
    languageModel: responses,
  });
  const chatPlugin = defineModelProvider({
    kind: 'model',
    specificationVersion: 'model-v1',
    name: 'openai-chat',
    languageModel: chat,
  });
  const provider = (modelId: string) => responses(modelId);
  return Object.freeze(Object.assign(provider, { responses, chat, plugin, chatPlugin }));
}

/**
 * The default OpenAI provider: the key from `OPENAI_API_KEY` and the base URL from
 * `OPENAI_BASE_URL`, both read at the first request, so importing this never throws.
 *
 * @example
 * ```ts
 * import { defineAgent } from '@ghost/core';
 * import { openai } from '@ghost/provider-openai';
 *
 * const agent = defineAgent({ name: 'helper', model: openai('gpt-5') });
 * const run = await agent.ask('What is 6 * 7?');
 * ```
 */
export const openai: OpenAIProvider = createOpenAI();
