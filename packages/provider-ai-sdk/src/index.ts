/**
 * Any Vercel AI SDK language model as a Ghost model: `fromAISDK(openai('gpt-5'))`. Takes models of
 * specification `v3` (`ai@6`, `@ai-sdk/*` 3.x), `v2` (`ai@5`) and `v4` (`ai@7`).
 *
 * @example
 * ```ts
 * import { anthropic } from '@ai-sdk/anthropic';
 * import { fromAISDK } from '@ghost/provider-ai-sdk';
 *
 * const model = fromAISDK(anthropic('claude-sonnet-4-5'), { maxRetries: 3 });
 * ```
 *
 * @packageDocumentation
 */

export type {
  AISDKCallOptions,
  AISDKLanguageModel,
  AISDKSpecificationVersion,
  AISDKStreamResult,
} from './ai-sdk-language-model.js';
export { type FromAISDKOptions, fromAISDK } from './from-ai-sdk.js';
