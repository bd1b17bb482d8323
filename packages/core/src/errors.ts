// Every error family of @ghost/core, so the package's modules import them from one place. Each
// family lives in its own file; docs/errors.md lists every code.
export { CleanupError, type CleanupErrorInit } from './cleanup-error.js';
export {
  ConfigurationError,
  type ConfigurationErrorCode,
  type ConfigurationErrorFacts,
  type ConfigurationErrorInit,
} from './configuration-error.js';
export type { CoreErrorCode } from './core-error-code.js';
export {
  GhostError,
  type GhostErrorCode,
  type GhostErrorInit,
  type GhostErrorOptions,
  markErrorClass,
} from './ghost-error.js';
export {
  ModelAuthenticationError,
  ModelContentFilterError,
  ModelContextOverflowError,
  ModelError,
  type ModelErrorCode,
  type ModelErrorFacts,
  type ModelErrorInit,
  ModelRateLimitError,
  ModelResponseError,
  ModelUnavailableError,
  OutputValidationError,
  type RetryableModelErrorInit,
} from './model-errors.js';
export {
  PluginAlreadyRegisteredError,
  type PluginErrorCode,
  type PluginErrorFacts,
  type PluginErrorInit,
  PluginInvalidError,
  PluginLoadError,
  PluginNotFoundError,
  PluginNotInstalledError,
  PluginVersionError,
} from './plugin-errors.js';
export {
  AgentInterjectionError,
  AgentLimitError,
  CancelledError,
  DeadlineExceededError,
  type RunErrorCode,
  RunStateError,
} from './run-errors.js';
export { SandboxUnavailableError, type SandboxUnavailableErrorInit } from './sandbox-errors.js';
export {
  ToolError,
  type ToolErrorCode,
  ToolResultInvalidError,
  ToolSourceError,
  type ToolSourceErrorInit,
  ToolTimeoutError,
} from './tool-errors.js';
export { WorkspaceClosedError } from './workspace-closed-error.js';
