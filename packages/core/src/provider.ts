/**
 * For model provider authors: the retry policy every provider shares, the mapping from HTTP
 * failures to the typed `ModelError` family, and the bounds every answer is read under
 * (`ModelStreamLimits`, `limitServerSentEvents`). Applications do not need this entry point.
 *
 * @example
 * ```ts
 * import { modelErrorFromHttp, retryModelRequest } from '@ghost/core/provider';
 * ```
 *
 * @packageDocumentation
 */

// The code unions, so a provider's own codes sit beside the ones its errors may carry.
export type { ConfigurationErrorCode } from './configuration-error.js';
export type { CoreErrorCode } from './core-error-code.js';
export { defineModelProvider } from './define-model-provider.js';
export { ModelError } from './errors.js';
export {
  GhostError,
  type GhostErrorCode,
  type GhostErrorInit,
  type GhostErrorOptions,
} from './ghost-error.js';
export { limitServerSentEvents } from './limit-server-sent-events.js';
export {
  type Artifact,
  defaultModelStreamLimits,
  type JsonSchema,
  type ModelAssistantMessage,
  type ModelFilePart,
  type ModelFinishReason,
  type ModelImagePart,
  type ModelMessage,
  type ModelOutputFormat,
  type ModelReasoning,
  type ModelRequest,
  type ModelRetryNotice,
  type ModelSettings,
  type ModelStreamLimits,
  type ModelStreamOptions,
  type ModelStreamPart,
  type ModelTextPart,
  type ModelToolCall,
  type ModelToolDefinition,
  type ModelToolMessage,
  type ModelUserContentPart,
  type ModelUserMessage,
  type ModelV1,
  type ProviderOptions,
} from './model.js';
export {
  type ModelStreamSizeLimit,
  modelConnectionError,
  modelErrorFromHttp,
  modelStreamError,
  modelStreamLimitError,
  type ProviderHttpFailure,
} from './model-error-mapping.js';
export {
  ModelAuthenticationError,
  ModelContentFilterError,
  ModelContextOverflowError,
  type ModelErrorCode,
  type ModelErrorFacts,
  type ModelErrorInit,
  ModelRateLimitError,
  ModelResponseError,
  ModelUnavailableError,
  type RetryableModelErrorInit,
} from './model-errors.js';
export {
  type ModelRetryPolicy,
  modelStreamIdleError,
  type RetryModelRequestOptions,
  retryAfterMilliseconds,
  retryModelRequest,
} from './model-retry.js';
export type { ModelProviderV1 } from './plugin.js';
export type { PluginDeclaration } from './plugin-declaration.js';
export type { PluginErrorCode } from './plugin-errors.js';
export type { RunErrorCode } from './run-errors.js';
export type { ToolErrorCode } from './tool-errors.js';
export type { UsageInit } from './usage.js';
