import { ConfigurationError, GhostError, ToolError } from '@ghost/core';
import { type ConfigurationErrorInit, type GhostErrorInit, markErrorClass } from '@ghost/core/plugin';

/** Every code an error thrown by `@ghost/mcp-client` can carry (see `docs/errors.md`). */
export type McpErrorCode =
  | 'MCP_CONFIGURATION_INVALID'
  | 'MCP_CONNECTION_FAILED'
  | 'MCP_SERVER_CLOSED'
  | 'MCP_LIMIT_EXCEEDED'
  | 'TOOL_ERROR';

/** What the MCP errors' constructors take besides the message: the server and tool at fault, when known. */
export type McpErrorInit<Code extends string> = GhostErrorInit<Code> & {
  /** The MCP server's name. */
  readonly server?: string;
  /** The tool, by its name on the MCP server. */
  readonly tool?: string;
};

/** `mcpTools()` or `mcpServer()` options are wrong: a missing command or URL, an unknown key, a bad limit. */
export class McpConfigurationError extends ConfigurationError {
  static {
    markErrorClass(McpConfigurationError, 'McpConfigurationError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'MCP_CONFIGURATION_INVALID';

  constructor(message: string, init: ConfigurationErrorInit<'MCP_CONFIGURATION_INVALID'> = {}) {
    super(message, { ...init, code: 'MCP_CONFIGURATION_INVALID' });
  }
}

/**
 * Connecting to an MCP server failed: the command could not start, the URL did not answer, or
 * the server did not complete the MCP handshake. The message names the server and the cause.
 */
export class McpConnectionError extends GhostError {
  static {
    markErrorClass(McpConnectionError, 'McpConnectionError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'MCP_CONNECTION_FAILED';
  /** The MCP server's name. */
  readonly server: string | undefined;
  /** The tool being listed or called, when the failure concerns one. */
  readonly tool: string | undefined;

  constructor(message: string, init: McpErrorInit<'MCP_CONNECTION_FAILED'> = {}) {
    super(message, { ...init, code: 'MCP_CONNECTION_FAILED' });
    this.server = init.server;
    this.tool = init.tool;
  }
}

/**
 * The server went away while a call was in flight, or before it: the stdio process exited or
 * the connection closed. A `ToolError`, so the model (or the program) reads what happened and can
 * carry on without that server's tools.
 */
export class McpServerClosedError extends ToolError {
  static {
    markErrorClass(McpServerClosedError, 'McpServerClosedError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'MCP_SERVER_CLOSED';
  /** The MCP server's name. */
  readonly server: string | undefined;

  constructor(message: string, init: McpErrorInit<'MCP_SERVER_CLOSED'> = {}) {
    super(message, { ...init, code: 'MCP_SERVER_CLOSED' });
    this.server = init.server;
  }
}

/**
 * The server went past one of `limits`: more tools than `maxTools`, more pages than
 * `maxListPages`, or a message larger than `maxMessageBytes`. The message names the limit to
 * raise, if the server is trusted to need it.
 */
export class McpLimitError extends ToolError {
  static {
    markErrorClass(McpLimitError, 'McpLimitError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'MCP_LIMIT_EXCEEDED';
  /** The MCP server's name. */
  readonly server: string | undefined;

  constructor(message: string, init: McpErrorInit<'MCP_LIMIT_EXCEEDED'> = {}) {
    super(message, { ...init, code: 'MCP_LIMIT_EXCEEDED' });
    this.server = init.server;
  }
}

/**
 * An MCP server answered a call or listing with an error, or the tool reported one. A
 * `ToolError` with its code (`TOOL_ERROR`): the message goes to the model, which can try
 * something else.
 */
export class McpToolError extends ToolError {
  static {
    markErrorClass(McpToolError, 'McpToolError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'TOOL_ERROR';
  /** The MCP server's name, when the server answered with an error. */
  readonly server: string | undefined;
  /** The tool that failed, by its name on the MCP server. */
  readonly tool: string | undefined;
  /** The JSON-RPC error code the server answered with. */
  readonly mcpCode: number | undefined;

  constructor(message: string, init: McpErrorInit<'TOOL_ERROR'> & { readonly mcpCode?: number } = {}) {
    super(message, { ...init, code: 'TOOL_ERROR' });
    this.server = init.server;
    this.tool = init.tool;
    this.mcpCode = init.mcpCode;
  }
}
