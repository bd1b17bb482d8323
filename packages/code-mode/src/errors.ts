import { ConfigurationError, GhostError, type GhostErrorOptions, ToolError } from '@ghost/core';

/**
 * A code-mode setting is wrong: an unknown limit, a reserved or colliding tool name, an unknown
 * `except` name, an engine or sandbox that does not exist. Thrown when the agent is defined, or
 * when its run starts for settings that come from the runtime.
 */
export class CodeModeConfigurationError extends ConfigurationError {
  constructor(message: string, options: Partial<GhostErrorOptions> = {}) {
    super(message, { code: 'CODE_MODE_CONFIGURATION_INVALID', ...options });
  }
}

/**
 * A control operation the session cannot perform now: another one is in progress, `exec` while a
 * program is still working, `wait` or `stop` with nothing running, the program limit reached, or
 * the session closed. It is a `ToolError`, so the model reads the message and can recover.
 */
export class CodeModeStateError extends ToolError {
  constructor(message: string, options: Partial<GhostErrorOptions> = {}) {
    super(message, { code: 'CODE_MODE_STATE_INVALID', ...options });
  }
}

/** The program's source is larger than `limits.sourceBytes`; nothing was started. */
export class CodeModeSourceTooLargeError extends ToolError {
  constructor(message: string, options: Partial<GhostErrorOptions> = {}) {
    super(message, { code: 'CODE_MODE_SOURCE_TOO_LARGE', ...options });
  }
}

/**
 * The engine host could not be started or set up, twice in a row: the machine, the sandbox or
 * the engine is broken, not the program. The message says what happened.
 */
export class CodeModeHostError extends GhostError {
  constructor(message: string, options: Partial<GhostErrorOptions> = {}) {
    super(message, { code: 'CODE_MODE_HOST_FAILED', ...options });
  }
}
