import { ConfigurationError, type ModelV1 } from '@ghost/core';
import { defineModelProvider, type ModelProviderV1 } from '@ghost/core/provider';
import type OpenAI from 'openai';
import { OpenAIChatModel } from './chat-model.js';
import { checkModelId, checkSettings } from './check-settings.js';
import { type ClientFlavour, checkClientSettings, lazyClient } from './openai-client.js';

/** The options of {@link createOpenAICompatible}. */
export interface OpenAICompatibleSettings {
  /**
   * The provider's name, such as `ollama`: the name of its registry plugin, the key its
   * `providerOptions` are read from, and the name in its errors. Letters, digits, `.`, `_`, `-`.
   */
  readonly name: string;
  /** The server's base URL, such as `http://127.0.0.1:11434/v1`. Required unless `client` is given. */
  readonly baseURL?: string;
  /** Sent as a bearer token when given. No key is needed otherwise, and none is read from the environment. */
  readonly apiKey?: string;
  /** Headers sent with every request. */
  readonly headers?: Readonly<Record<string, string>>;
  /** A `fetch` to use instead of the global one. */
  readonly fetch?: typeof globalThis.fetch;
  /** A client you configured yourself (`new OpenAI({ baseURL, ... })`), used with the SDK's retries off. */
  readonly client?: OpenAI;
  /** Retries of a request that failed before its answer began. Default 2. */
  readonly maxRetries?: number;
  /** How long to wait for the server to start answering, in milliseconds. */
  readonly timeoutMs?: number;
}

/** Models on a server that speaks Chat Completions, made by {@link createOpenAICompatible}. */
export interface OpenAICompatibleProvider {
  /** The model with this name on the server, such as `qwen2.5-coder`. */
  (modelId: string): ModelV1;
  /** The same as calling the provider. */
  chat(modelId: string): ModelV1;
  /** This provider as a registry plugin with its `name`, for `createRuntime({ models: [...] })`. */
  readonly plugin: ModelProviderV1;
}

const settingKinds = {
  name: 'string',
  baseURL: 'string',
  apiKey: 'string',
  headers: 'headers',
  fetch: 'function',
  client: 'client',
  maxRetries: 'count',
  timeoutMs: 'milliseconds',
} as const;

// The registry's plugin-name rule: the name is also a provider-options key and part of model ids.
const providerNamePattern = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** A compatible model whose reported id may differ from the name sent to the server. */
export type CompatibleModelFactory = (requestModelId: string, reportedModelId?: string) => ModelV1;

/** @internal shared with the `openai-compatible` registry plugin, which reports whole ids. */
export function compatibleModelFactory(settings: OpenAICompatibleSettings): CompatibleModelFactory {
  checkSettings(settings, settingKinds, 'createOpenAICompatible');
  const { name } = settings;
  if (typeof name !== 'string' || !providerNamePattern.test(name)) {
    throw new ConfigurationError(
      `createOpenAICompatible({ name }) takes a name of letters, digits, '.', '_' or '-', such as 'ollama'; got ${JSON.stringify(name)}.`,
      { code: 'PROVIDER_OPTION_INVALID', option: 'name' },
    );
  }
  const flavour: ClientFlavour = { provider: name, factoryName: 'createOpenAICompatible', isOpenAI: false };
  checkClientSettings(settings, flavour);
  if (settings.client === undefined && settings.baseURL === undefined) {
    throw new ConfigurationError(
      `createOpenAICompatible({ name: '${name}' }) needs the server's baseURL, such as 'http://127.0.0.1:11434/v1' for Ollama.`,
      { code: 'PROVIDER_OPTION_INVALID', option: 'baseURL' },
    );
  }
  const client = lazyClient(settings, flavour);
  const failure = {
    provider: name,
    credentialsHint: `the apiKey option of createOpenAICompatible({ name: '${name}' })`,
  };
  return (requestModelId, reportedModelId) => {
    checkModelId(requestModelId, name);
    return new OpenAIChatModel({
      modelId: reportedModelId ?? requestModelId,
      requestModelId,
      provider: name,
      optionsKey: name,
      isOpenAI: false,
      client,
      failure,
      maxRetries: settings.maxRetries,
    });
  };
}

/**
 * Creates a provider for a server that speaks OpenAI's Chat Completions: Ollama, vLLM,
 * LM Studio, llama.cpp's server, OpenRouter and others. No key is required unless you give one
 * (none is read from the environment). Reasoning the server streams as `reasoning_content` or
 * `reasoning` comes through as reasoning; a server that reports no usage leaves usage unknown;
 * tool calls without ids get generated ones. Options for the server go in
 * `providerOptions[name]` and are merged into the request body.
 *
 * @example
 * ```ts
 * import { defineAgent } from '@ghost/core';
 * import { createOpenAICompatible } from '@ghost/provider-openai';
 *
 * const ollama = createOpenAICompatible({ name: 'ollama', baseURL: 'http://127.0.0.1:11434/v1' });
 * const agent = defineAgent({ name: 'coder', model: ollama('qwen2.5-coder') });
 * ```
 */
export function createOpenAICompatible(settings: OpenAICompatibleSettings): OpenAICompatibleProvider {
  const model = compatibleModelFactory(settings);
  const chat = (modelId: string) => model(modelId);
  const plugin = defineModelProvider({
    kind: 'model',
    specificationVersion: 'model-v1',
    name: settings.name,
    languageModel: chat,
  });
  const provider = (modelId: string) => chat(modelId);
  return Object.freeze(Object.assign(provider, { chat, plugin }));
}
