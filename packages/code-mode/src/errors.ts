import { ConfigurationError, GhostError, ToolError } from '@ghost/core';
import { type ConfigurationErrorInit, type GhostErrorInit, markErrorClass } from '@ghost/core/plugin';

/** The codes of a {@link CodeModeConfigurationError}. */
export type CodeModeConfigurationErrorCode =
  | 'CODE_MODE_CONFIGURATION_INVALID'
  | 'CODE_MODE_OPTION_UNKNOWN'
  | 'CODE_MODE_LIMIT_UNKNOWN'
  | 'CODE_MODE_LIMIT_INVALID'
  | 'CODE_MODE_EXCEPT_UNKNOWN'
  | 'CODE_MODE_TOOL_NAME_RESERVED'
  | 'CODE_MODE_TOOL_NAME_COLLISION'
  | 'CODE_MODE_THREAD_NEEDS_UNRESTRICTED';

/** Every code an error thrown by `@ghost/code-mode` itself can carry (see `docs/errors.md`). */
export type CodeModeErrorCode =
  | CodeModeConfigurationErrorCode
  | 'CODE_MODE_STATE_INVALID'
  | 'CODE_MODE_SOURCE_TOO_LARGE'
  | 'CODE_MODE_HOST_FAILED';

/** What {@link CodeModeConfigurationError}'s constructor takes besides the message. */
export type CodeModeConfigurationErrorInit = ConfigurationErrorInit<CodeModeConfigurationErrorCode> & {
  /** The limit that is unknown or out of range, such as `sourceBytes`. */
  readonly limit?: string;
  /** The largest value the limit accepts. */
  readonly maximum?: number;
  /** The `tools.<identifier>` name a tool would get in programs. */
  readonly identifier?: string;
  /** The tools whose names collide. */
  readonly tools?: readonly string[];
  /** The placement that cannot be used with the sandbox. */
  readonly placement?: string;
  /** The sandbox the placement cannot be used with. */
  readonly sandbox?: string;
};

/**
 * A code-mode setting is wrong: an unknown limit, a reserved or colliding tool name, an unknown
 * `except` name, an engine or sandbox that does not exist. Thrown when the agent is defined, or
 * when its run starts for settings that come from the runtime.
 */
export class CodeModeConfigurationError extends ConfigurationError {
  static {
    markErrorClass(CodeModeConfigurationError, 'CodeModeConfigurationError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: CodeModeConfigurationErrorCode;
  /** The limit that is unknown or out of range, such as `sourceBytes`. */
  readonly limit: string | undefined;
  /** The largest value the limit accepts. */
  readonly maximum: number | undefined;
  /** The `tools.<identifier>` name a tool would get in programs. */
  readonly identifier: string | undefined;
  /** The tools whose names collide. */
  readonly tools: readonly string[] | undefined;
  /** The placement that cannot be used with the sandbox. */
  readonly placement: string | undefined;
  /** The sandbox the placement cannot be used with. */
  readonly sandbox: string | undefined;

  constructor(message: string, init: CodeModeConfigurationErrorInit = {}) {
    super(message, { ...init, code: init.code ?? 'CODE_MODE_CONFIGURATION_INVALID' });
    this.limit = init.limit;
    this.maximum = init.maximum;
    this.identifier = init.identifier;
    this.tools = init.tools;
    this.placement = init.placement;
    this.sandbox = init.sandbox;
  }
}

/**
 * A control operation the session cannot perform now: another one is in progress, `exec` while a
 * program is still working, `wait` or `stop` with nothing running, the program limit reached, or
 * the session closed. It is a `ToolError`, so the model reads the message and can recover.
 */
export class CodeModeStateError extends ToolError {
  static {
    markErrorClass(CodeModeStateError, 'CodeModeStateError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'CODE_MODE_STATE_INVALID';

  constructor(message: string, init: GhostErrorInit<'CODE_MODE_STATE_INVALID'> = {}) {
    super(message, { ...init, code: 'CODE_MODE_STATE_INVALID' });
  }
}

/** The program's source is larger than `limits.sourceBytes`; nothing was started. */
export class CodeModeSourceTooLargeError extends ToolError {
  static {
    markErrorClass(CodeModeSourceTooLargeError, 'CodeModeSourceTooLargeError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'CODE_MODE_SOURCE_TOO_LARGE';
  /** The program's size in bytes (UTF-8). */
  readonly sourceBytes: number | undefined;
  /** The `limits.sourceBytes` it went over. */
  readonly limit: number | undefined;

  constructor(
    message: string,
    init: GhostErrorInit<'CODE_MODE_SOURCE_TOO_LARGE'> & {
      readonly sourceBytes?: number;
      readonly limit?: number;
    } = {},
  ) {
    super(message, { ...init, code: 'CODE_MODE_SOURCE_TOO_LARGE' });
    this.sourceBytes = init.sourceBytes;
    this.limit = init.limit;
  }
}

/**
 * The engine host could not be started or set up, twice in a row: the machine, the sandbox or
 * the engine is broken, not the program. The message says what happened.
 */
export class CodeModeHostError extends GhostError {
  static {
    markErrorClass(CodeModeHostError, 'CodeModeHostError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'CODE_MODE_HOST_FAILED';

  constructor(message: string, init: GhostErrorInit<'CODE_MODE_HOST_FAILED'> = {}) {
    super(message, { ...init, code: 'CODE_MODE_HOST_FAILED' });
  }
}
