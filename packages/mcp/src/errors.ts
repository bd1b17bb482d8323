import { ConfigurationError, GhostError, type GhostErrorOptions, ToolError } from '@ghost/core';

/** `mcpTools()` or `mcpServer()` options are wrong: a missing command or URL, an unknown key, a bad limit. */
export class McpConfigurationError extends ConfigurationError {
  constructor(message: string, options: Partial<GhostErrorOptions> = {}) {
    super(message, { code: 'MCP_CONFIGURATION_INVALID', ...options });
  }
}

/**
 * Connecting to an MCP server failed: the command could not start, the URL did not answer, or
 * the server did not complete the MCP handshake. The message names the server and the cause.
 */
export class McpConnectionError extends GhostError {
  constructor(message: string, options: Partial<GhostErrorOptions> = {}) {
    super(message, { code: 'MCP_CONNECTION_FAILED', ...options });
  }
}

/**
 * The server went away while a call was in flight, or before it: the stdio process exited or
 * the connection closed. A `ToolError`, so the model (or the program) reads what happened and can
 * carry on without that server's tools.
 */
export class McpServerClosedError extends ToolError {
  constructor(message: string, options: Partial<GhostErrorOptions> = {}) {
    super(message, { code: 'MCP_SERVER_CLOSED', ...options });
  }
}

/**
 * The server went past one of `limits`: more tools than `maxTools`, more pages than
 * `maxListPages`, or a message larger than `maxMessageBytes`. The message names the limit to
 * raise, if the server is trusted to need it.
 */
export class McpLimitError extends ToolError {
  constructor(message: string, options: Partial<GhostErrorOptions> = {}) {
    super(message, { code: 'MCP_LIMIT_EXCEEDED', ...options });
  }
}
