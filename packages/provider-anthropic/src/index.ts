/**
 * Claude models for Ghost agents, on Anthropic's Messages API through the official
 * `@anthropic-ai/sdk` (a peer dependency): streaming text, extended thinking sent back signed on
 * the next turn, tool calls, prompt caching, structured output, images and PDFs.
 *
 * @example
 * ```ts
 * import { defineAgent } from '@ghost/core';
 * import { anthropic } from '@ghost/provider-anthropic';
 *
 * const agent = defineAgent({ name: 'helper', model: anthropic('claude-sonnet-4-5') });
 * const run = await agent.ask('Say hello.');
 * ```
 *
 * @packageDocumentation
 */

import type { ModelProviderV1 } from '@ghost/core/provider';
import { anthropic } from './anthropic-provider.js';

export {
  type AnthropicProvider,
  type AnthropicProviderSettings,
  anthropic,
  createAnthropic,
} from './anthropic-provider.js';
export type { AnthropicProviderOptions } from './anthropic-provider-options.js';

/**
 * The registry plugin named `anthropic`: with this package installed, `model:
 * 'anthropic:claude-sonnet-4-5'` resolves through it, using `ANTHROPIC_API_KEY`. To resolve with
 * other settings, register `createAnthropic({ ... }).plugin` in `createRuntime({ models })`.
 */
const anthropicPlugin: ModelProviderV1 = anthropic.plugin;
export default anthropicPlugin;
