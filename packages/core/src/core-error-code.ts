import type { ConfigurationErrorCode } from './configuration-error.js';
import type { ModelErrorCode } from './model-errors.js';
import type { PluginErrorCode } from './plugin-errors.js';
import type { RunErrorCode } from './run-errors.js';
import type { SessionErrorCode } from './session-errors.js';
import type { ToolErrorCode } from './tool-errors.js';

/**
 * Every code an error thrown by `@ghost/core` can carry. Each code is listed, with its class
 * and what to do about it, in `docs/errors.md`.
 */
export type CoreErrorCode =
  | ConfigurationErrorCode
  | PluginErrorCode
  | RunErrorCode
  | SessionErrorCode
  | ToolErrorCode
  | ModelErrorCode
  | 'CLEANUP_FAILED'
  | 'SANDBOX_UNAVAILABLE'
  | 'SANDBOX_WORKSPACE_REFUSED'
  | 'WORKSPACE_CLOSED'
  | 'SCRIPTED_MODEL_MISMATCH';
