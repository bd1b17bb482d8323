import { ConfigurationError, type GhostErrorOptions } from '@ghost/core';

/**
 * A `ghost-mcp` setting is wrong: the config file is missing or is not JSON, it has a key Ghost
 * does not know, a server entry is malformed, or a command-line flag is. The `code` says which
 * (`GHOST_MCP_CONFIG_NOT_FOUND`, `GHOST_MCP_CONFIG_JSON_INVALID`, `GHOST_MCP_CONFIG_KEY_UNKNOWN`,
 * `GHOST_MCP_CONFIG_SERVER_INVALID`, `GHOST_MCP_CONFIG_INVALID`, `GHOST_MCP_ARGUMENTS_INVALID`)
 * and the message says what to fix.
 */
export class GhostMcpConfigError extends ConfigurationError {
  constructor(message: string, options: Partial<GhostErrorOptions> = {}) {
    super(message, { code: 'GHOST_MCP_CONFIG_INVALID', ...options });
  }
}
