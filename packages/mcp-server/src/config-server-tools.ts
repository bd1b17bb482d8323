import type { Tool } from '@ghost/core';
import type { GhostMcpConfig } from './ghost-mcp-config.js';
import { GhostMcpConfigError } from './ghost-mcp-config-error.js';

/** The tools of the MCP servers a config names, and how to disconnect from those servers. */
export interface ConfigServerTools {
  readonly tools: readonly Tool[];
  close(): Promise<void>;
}

/**
 * Connects to the MCP servers the config names and returns their tools. Reaching MCP servers is
 * `@ghost/mcp`'s job (`mcpTools()`); until this release depends on it, a config that names
 * servers is refused rather than served without their tools.
 */
export async function openConfigServerTools(config: GhostMcpConfig): Promise<ConfigServerTools> {
  const names = Object.keys(config.servers);
  if (names.length > 0) {
    throw new GhostMcpConfigError(
      `${config.path}: servers (${names.join(', ')}) need the package @ghost/mcp, which this release of ghost-mcp does not include yet. Remove "servers" and serve Ghost tools through "toolModules", or upgrade @ghost/mcp-server to a release built with @ghost/mcp.`,
      { code: 'GHOST_MCP_SERVERS_UNAVAILABLE', details: { path: config.path, servers: names } },
    );
  }
  return { tools: [], close: async () => {} };
}
