/**
 * OpenAI models for Ghost agents: {@link openai} and {@link createOpenAI} for the Responses and
 * Chat Completions APIs, {@link createOpenAICompatible} for any server that speaks Chat
 * Completions. The default export is the `openai` registry plugin, so model ids such as
 * `'openai:gpt-5'` work once this package is installed.
 *
 * @example
 * ```ts
 * import { defineAgent } from '@ghost/core';
 * import { openai } from '@ghost/provider-openai';
 *
 * const agent = defineAgent({ name: 'helper', model: openai('gpt-5') });
 * ```
 *
 * @packageDocumentation
 */
import type { ModelProviderV1 } from '@ghost/core/provider';
import { openai } from './openai-provider.js';

export {
  createOpenAICompatible,
  type OpenAICompatibleProvider,
  type OpenAICompatibleSettings,
} from './openai-compatible-provider.js';
export { createOpenAI, type OpenAIProvider, type OpenAIProviderSettings, openai } from './openai-provider.js';
export { isStrictJsonSchema } from './strict-json-schema.js';

/** The default OpenAI provider's Responses models, as the plugin `openai`. */
const openaiPlugin: ModelProviderV1 = openai.plugin;

export default openaiPlugin;
