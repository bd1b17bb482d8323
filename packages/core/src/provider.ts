/**
 * For model provider authors: the retry policy every provider shares, and the mapping from HTTP
 * failures to the typed `ModelError` family. Applications do not need this entry point.
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
export { ModelError } from './errors.js';
export {
  GhostError,
  type GhostErrorCode,
  type GhostErrorInit,
  type GhostErrorOptions,
} from './ghost-error.js';
export type {
  JsonSchema,
  ModelOutputFormat,
  ModelReasoning,
  ModelRequest,
  ModelRetryNotice,
  ModelSettings,
  ModelStreamOptions,
  ModelStreamPart,
  ModelV1,
  ProviderOptions,
} from './model.js';
export {
  modelConnectionError,
  modelErrorFromHttp,
  modelStreamError,
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
  type RetryModelRequestOptions,
  retryAfterMilliseconds,
  retryModelRequest,
} from './model-retry.js';
export type { PluginErrorCode } from './plugin-errors.js';
export type { RunErrorCode } from './run-errors.js';
export type { ToolErrorCode } from './tool-errors.js';
