import { ConfigurationError } from '@ghost/core';
import { type ConfigurationErrorInit, markErrorClass } from '@ghost/core/plugin';

/** The codes of a {@link GhostMcpConfigError}. */
export type GhostMcpConfigErrorCode =
  | 'GHOST_MCP_CONFIG_INVALID'
  | 'GHOST_MCP_CONFIG_NOT_FOUND'
  | 'GHOST_MCP_CONFIG_JSON_INVALID'
  | 'GHOST_MCP_CONFIG_KEY_UNKNOWN'
  | 'GHOST_MCP_CONFIG_SERVER_INVALID'
  | 'GHOST_MCP_ARGUMENTS_INVALID'
  | 'GHOST_MCP_TOOL_MODULE_INVALID';

/**
 * Every code an error thrown by `@ghost/mcp-server` itself can carry (see `docs/errors.md`); the
 * HTTP codes are carried by a `ConfigurationError`.
 */
export type McpServerErrorCode =
  | GhostMcpConfigErrorCode
  | 'GHOST_MCP_HTTP_OPTION_INVALID'
  | 'GHOST_MCP_HTTP_LISTEN_FAILED';

/** What {@link GhostMcpConfigError}'s constructor takes besides the message. */
export type GhostMcpConfigErrorInit = ConfigurationErrorInit<GhostMcpConfigErrorCode> & {
  /** The key the config has that Ghost does not know. */
  readonly key?: string;
  /** The server entry that is wrong. */
  readonly server?: string;
};

/**
 * A `ghost-mcp` setting is wrong: the config file is missing or is not JSON, it has a key Ghost
 * does not know, a server entry is malformed, or a command-line flag is. The `code` says which
 * (`GHOST_MCP_CONFIG_NOT_FOUND`, `GHOST_MCP_CONFIG_JSON_INVALID`, `GHOST_MCP_CONFIG_KEY_UNKNOWN`,
 * `GHOST_MCP_CONFIG_SERVER_INVALID`, `GHOST_MCP_CONFIG_INVALID`, `GHOST_MCP_ARGUMENTS_INVALID`)
 * and the message says what to fix.
 */
export class GhostMcpConfigError extends ConfigurationError {
  static {
    markErrorClass(GhostMcpConfigError, 'GhostMcpConfigError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: GhostMcpConfigErrorCode;
  /** The key the config has that Ghost does not know. */
  readonly key: string | undefined;
  /** The server entry that is wrong. */
  readonly server: string | undefined;

  constructor(message: string, init: GhostMcpConfigErrorInit = {}) {
    super(message, { ...init, code: init.code ?? 'GHOST_MCP_CONFIG_INVALID' });
    this.key = init.key;
    this.server = init.server;
  }
}
