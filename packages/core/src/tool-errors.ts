import { GhostError, type GhostErrorInit, markErrorClass } from './ghost-error.js';

/** The codes `@ghost/core`'s tool errors carry. */
export type ToolErrorCode =
  | 'TOOL_ERROR'
  | 'TOOL_TIMEOUT'
  | 'TOOL_RESULT_INVALID'
  | 'TOOL_SOURCE_FAILED'
  | 'AGENT_TOOL_FAILED'
  | 'SUBAGENT_REQUEST_INVALID'
  | 'SUBAGENT_LIMIT_REACHED';

/**
 * Thrown by a tool to tell the model what went wrong. Its message goes to the model as the tool
 * result and the run goes on, so write it for the model: say what to change. Packages give
 * their subclasses their own codes (such as `MCP_SERVER_CLOSED`), so its `code` is open.
 *
 * @example
 * ```ts
 * throw new ToolError('No order 481 exists. Ask the customer for the order number.');
 * ```
 */
export class ToolError extends GhostError {
  static {
    markErrorClass(ToolError, 'ToolError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'TOOL_ERROR' | (string & {});

  constructor(message: string, init: GhostErrorInit<'TOOL_ERROR' | (string & {})> = {}) {
    super(message, { ...init, code: init.code ?? 'TOOL_ERROR' });
  }
}

/**
 * A tool call ran past its tool's `timeoutMs`. It is the `reason` of the call's aborted signal,
 * and the model is told the call timed out.
 */
export class ToolTimeoutError extends GhostError {
  static {
    markErrorClass(ToolTimeoutError, 'ToolTimeoutError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'TOOL_TIMEOUT';

  constructor(message: string, init: GhostErrorInit<'TOOL_TIMEOUT'> = {}) {
    super(message, { ...init, code: 'TOOL_TIMEOUT' });
  }
}

/** A tool returned something that is not JSON, or does not match its output schema. */
export class ToolResultInvalidError extends GhostError {
  static {
    markErrorClass(ToolResultInvalidError, 'ToolResultInvalidError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'TOOL_RESULT_INVALID';

  constructor(message: string, init: GhostErrorInit<'TOOL_RESULT_INVALID'> = {}) {
    super(message, { ...init, code: 'TOOL_RESULT_INVALID' });
  }
}

/** What {@link ToolSourceError}'s constructor takes besides the message. */
export type ToolSourceErrorInit = GhostErrorInit<'TOOL_SOURCE_FAILED'> & {
  /** The tool source that failed. */
  readonly source?: string;
  /** The tool the source gave that is at fault. */
  readonly tool?: string;
};

/**
 * A tool source (such as an MCP server) could not be opened when a run started, or its tools
 * collide with another tool's name. Fails the run; the message names the source and the cause.
 */
export class ToolSourceError extends GhostError {
  static {
    markErrorClass(ToolSourceError, 'ToolSourceError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'TOOL_SOURCE_FAILED';
  /** The tool source that failed. */
  readonly source: string | undefined;
  /** The tool the source gave that is at fault, when one is. */
  readonly tool: string | undefined;

  constructor(message: string, init: ToolSourceErrorInit = {}) {
    super(message, { ...init, code: 'TOOL_SOURCE_FAILED' });
    this.source = init.source;
    this.tool = init.tool;
  }
}
