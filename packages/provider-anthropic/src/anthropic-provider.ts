import Anthropic from '@anthropic-ai/sdk';
import { ConfigurationError, type ModelV1 } from '@ghost/core';
import { defineModelProvider, ModelAuthenticationError, type ModelProviderV1 } from '@ghost/core/provider';
import { providerName } from './anthropic-error-mapping.js';
import { AnthropicMessagesModel } from './anthropic-messages-model.js';
import { limitedFetch } from './limited-fetch.js';

/** The options of {@link createAnthropic}. */
export interface AnthropicProviderSettings {
  /**
   * The API key, sent by the SDK as `Authorization: Bearer`. Default: the `ANTHROPIC_API_KEY`
   * environment variable, read at the first request.
   */
  readonly apiKey?: string;
  /** The API's base URL. Default: `ANTHROPIC_BASE_URL`, else `https://api.anthropic.com`. */
  readonly baseURL?: string;
  /** Headers added to every request, such as `anthropic-beta`. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The `fetch` the SDK uses, for proxies and tests. Default: the global `fetch`. */
  readonly fetch?: typeof globalThis.fetch;
  /**
   * A client you configured yourself (another authentication, middleware, a gateway). It is used
   * as given, except that its own retries are turned off (Ghost retries, visibly); `apiKey`,
   * `baseURL`, `headers`, `fetch` and `timeoutMs` then belong on the client.
   */
  readonly client?: Anthropic;
  /** Retries of a request that failed before its answer began (429, 5xx, 529, lost connections). Default 2. */
  readonly maxRetries?: number;
  /** How long the SDK waits for a response before giving up on an attempt. Default: the SDK's, 10 minutes. */
  readonly timeoutMs?: number;
  /**
   * Prompt caching, on by default: `cache_control` markers on the last tool, the system
   * instructions and the latest user turn. `false` turns it off for every request of this provider;
   * `providerOptions.anthropic.cache` decides per request.
   */
  readonly cache?: boolean;
}

/**
 * Claude models: call it with a model id to get a `ModelV1` on the Messages API.
 *
 * What its models report: usage where `inputTokens` is all the input, `input_tokens +
 * cache_read_input_tokens + cache_creation_input_tokens` (Anthropic's `input_tokens` leaves the
 * cache out), with `cacheReadTokens` and `cacheWriteTokens` apart, `outputTokens` the final
 * cumulative count and `reasoningTokens` its thinking share when reported; a count not reported is
 * `undefined`. Finish reasons: `end_turn` and `stop_sequence` → `stop`, `max_tokens` and
 * `model_context_window_exceeded` → `length`, `tool_use` → `tool-calls`, `refusal` →
 * `content-filter`, `pause_turn` and newer values → `other`, the raw value kept. Thinking is turned
 * on per agent or run with `providerOptions: { anthropic: { thinking: { type: 'enabled',
 * budget_tokens: 4096 } } }`, and its signed blocks go back unchanged on the next turn.
 *
 * @example
 * ```ts
 * const model = anthropic('claude-sonnet-4-5');
 * ```
 */
export interface AnthropicProvider {
  (modelId: string): ModelV1;
  /** The same as calling the provider. */
  languageModel(modelId: string): ModelV1;
  /**
   * This provider as a registry plugin named `anthropic`, so `'anthropic:<model>'` references use
   * its settings: `createRuntime({ models: [createAnthropic({ apiKey }).plugin] })`.
   */
  readonly plugin: ModelProviderV1;
}

const settingKeys = new Set([
  'apiKey',
  'baseURL',
  'headers',
  'fetch',
  'client',
  'maxRetries',
  'timeoutMs',
  'cache',
]);
const clientOwnedKeys = ['apiKey', 'baseURL', 'headers', 'fetch', 'timeoutMs'] as const;

function invalid(message: string, option: string): ConfigurationError {
  return new ConfigurationError(message, {
    code: 'PROVIDER_OPTION_INVALID',
    provider: providerName,
    option,
  });
}

function checkSettings(settings: AnthropicProviderSettings): void {
  if (typeof settings !== 'object' || settings === null) {
    throw invalid('createAnthropic() takes an object of settings, such as { apiKey }.', 'settings');
  }
  for (const key of Object.keys(settings)) {
    if (!settingKeys.has(key)) {
      throw invalid(
        `createAnthropic() has no option '${key}'. Known options: ${[...settingKeys].join(', ')}.`,
        key,
      );
    }
  }
  if (settings.client !== undefined) {
    if (
      typeof settings.client?.messages?.create !== 'function' ||
      typeof settings.client.withOptions !== 'function'
    ) {
      throw invalid(
        'createAnthropic({ client }) takes a client made with new Anthropic() from @anthropic-ai/sdk.',
        'client',
      );
    }
    const clash = clientOwnedKeys.find((key) => settings[key] !== undefined);
    if (clash !== undefined) {
      throw invalid(
        `createAnthropic() was given both client and ${clash}; set ${clash} on the client you pass instead.`,
        clash,
      );
    }
  }
  const { maxRetries, timeoutMs } = settings;
  if (maxRetries !== undefined && (!Number.isInteger(maxRetries) || maxRetries < 0)) {
    throw invalid(
      `createAnthropic() has maxRetries = ${maxRetries}; use a whole number of at least 0.`,
      'maxRetries',
    );
  }
  if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
    throw invalid(
      `createAnthropic() has timeoutMs = ${timeoutMs}; use a number of milliseconds above 0.`,
      'timeoutMs',
    );
  }
  if (settings.cache !== undefined && typeof settings.cache !== 'boolean') {
    throw invalid('createAnthropic() takes cache: true or false.', 'cache');
  }
}

function environment(name: string): string | undefined {
  const value = process.env[name];
  return value === undefined || value.trim() === '' ? undefined : value;
}

/**
 * The fetch a client of the user's was made with. The SDK keeps it (or the global one) in a field
 * its types call private; `undefined` if a version of the SDK stops doing so, and then the
 * client's responses are read as the SDK reads them.
 */
function fetchOf(client: Anthropic): typeof globalThis.fetch | undefined {
  const fetch: unknown = Reflect.get(client, 'fetch');
  return typeof fetch === 'function' ? (fetch as typeof globalThis.fetch) : undefined;
}

/**
 * Makes the client on first use, so the environment is read when a request is made, not when the
 * module loads. A missing key throws before anything is sent. The client is kept while the key
 * and base URL it was made with stay the same, and made again when the environment changes them.
 * Its responses are read through `limitedFetch`, which bounds them before the SDK buffers anything.
 */
function lazyClient(settings: AnthropicProviderSettings): () => Anthropic {
  let made: { client: Anthropic; apiKey: string; baseURL: string | undefined } | undefined;
  return () => {
    if (settings.client !== undefined) {
      if (made === undefined) {
        const userFetch = fetchOf(settings.client);
        const client = settings.client.withOptions({
          maxRetries: 0,
          ...(userFetch !== undefined ? { fetch: limitedFetch(userFetch, providerName) } : {}),
        });
        made = { client, apiKey: '', baseURL: undefined };
      }
      return made.client;
    }
    const apiKey = settings.apiKey === '' ? undefined : (settings.apiKey ?? environment('ANTHROPIC_API_KEY'));
    if (apiKey === undefined) {
      throw new ModelAuthenticationError(
        'No Anthropic API key: set the ANTHROPIC_API_KEY environment variable, or pass createAnthropic({ apiKey }).',
        { provider: providerName },
      );
    }
    const baseURL = settings.baseURL ?? environment('ANTHROPIC_BASE_URL');
    if (made !== undefined && made.apiKey === apiKey && made.baseURL === baseURL) return made.client;
    const client = new Anthropic({
      apiKey,
      maxRetries: 0,
      fetch: limitedFetch(settings.fetch ?? globalThis.fetch, providerName),
      ...(baseURL !== undefined ? { baseURL } : {}),
      ...(settings.headers !== undefined ? { defaultHeaders: { ...settings.headers } } : {}),
      ...(settings.timeoutMs !== undefined ? { timeout: settings.timeoutMs } : {}),
    });
    made = { client, apiKey, baseURL };
    return client;
  };
}

/**
 * Makes an Anthropic provider. Nothing is read or checked against the network until the first
 * request: the API key comes from `apiKey` or, then, from `ANTHROPIC_API_KEY`.
 *
 * @example
 * ```ts
 * import { createAnthropic } from '@ghost/provider-anthropic';
 *
 * const anthropic = createAnthropic({ apiKey: process.env.MY_KEY, maxRetries: 4 });
 * const agent = defineAgent({ name: 'helper', model: anthropic('claude-sonnet-4-5') });
 * ```
 */
export function createAnthropic(settings: AnthropicProviderSettings = {}): AnthropicProvider {
  checkSettings(settings);
  const config = {
    client: lazyClient(settings),
    maxRetries: settings.maxRetries,
    isCacheOn: settings.cache ?? true,
  };
  const languageModel = (modelId: string): ModelV1 => {
    if (typeof modelId !== 'string' || modelId.trim() === '') {
      throw invalid(
        `An Anthropic model needs a model id, such as 'claude-sonnet-4-5'; got ${JSON.stringify(modelId)}.`,
        'modelId',
      );
    }
    return new AnthropicMessagesModel(modelId, config);
  };
  const plugin = defineModelProvider({
    kind: 'model',
    specificationVersion: 'model-v1',
    name: providerName,
    languageModel,
  });
  return Object.assign((modelId: string) => languageModel(modelId), { languageModel, plugin });
}

/**
 * The default Anthropic provider: `ANTHROPIC_API_KEY` (and `ANTHROPIC_BASE_URL`, if set) are
 * read when a request is made, from the first on, so importing it needs no key.
 *
 * @example
 * ```ts
 * import { anthropic } from '@ghost/provider-anthropic';
 *
 * const agent = defineAgent({ name: 'helper', model: anthropic('claude-sonnet-4-5') });
 * ```
 */
export const anthropic: AnthropicProvider = createAnthropic();
