// The error classes core's own modules throw and catch, imported from one place (the public
// entry, index.ts, names every family file directly). docs/errors.md lists every code.
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
  ModelError,
  ModelRateLimitError,
  ModelUnavailableError,
} from './model-errors.js';
export {
  PluginNotFoundError,
  PluginNotInstalledError,
} from './plugin-errors.js';
export {
  AgentInterjectionError,
  AgentLimitError,
  ApprovalError,
  type ApprovalErrorCode,
  CancelledError,
  DeadlineExceededError,
  PausedRunError,
  type PausedRunErrorCode,
  RunResumeConflictError,
  RunStateError,
} from './run-errors.js';
export { SandboxUnavailableError, type SandboxUnavailableErrorInit } from './sandbox-errors.js';
export {
  ToolError,
  ToolResultInvalidError,
  ToolSourceError,
  type ToolSourceErrorInit,
  ToolTimeoutError,
} from './tool-errors.js';
