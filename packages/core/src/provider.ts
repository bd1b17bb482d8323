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

export { ModelError } from './errors.js';
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
  type ModelErrorFacts,
  type ModelErrorInit,
  ModelRateLimitError,
  ModelResponseError,
  ModelUnavailableError,
} from './model-errors.js';
export {
  type ModelRetryPolicy,
  type RetryModelRequestOptions,
  retryAfterMilliseconds,
  retryModelRequest,
} from './model-retry.js';
