/**
 * The `openai-chat` registry plugin (default export): OpenAI's Chat Completions models for
 * model ids such as `'openai-chat:gpt-4.1'`, with the key from `OPENAI_API_KEY`. Applications
 * usually write `openai.chat('gpt-4.1')` from `@ghost/provider-openai` instead.
 *
 * @example
 * ```ts
 * import { defineAgent } from '@ghost/core';
 *
 * const agent = defineAgent({ name: 'helper', model: 'openai-chat:gpt-4.1' });
 * ```
 *
 * @packageDocumentation
 */
import type { ModelProviderV1 } from '@ghost/core/provider';
import { openai } from './openai-provider.js';

/** The default OpenAI provider's Chat Completions models, as the plugin `openai-chat`. */
const openaiChat: ModelProviderV1 = openai.chatPlugin;

export default openaiChat;
