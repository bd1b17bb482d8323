import type { Tool } from '@ghost/core';
import { CleanupError } from '@ghost/core/plugin';
import { type McpServerTools, type McpToolsOptions, mcpTools } from '@ghost/mcp-client';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { GhostMcpConfig, GhostMcpHttpServer, GhostMcpStdioServer } from './ghost-mcp-config.js';

/** The tools of the MCP servers a config names, and how to disconnect from those servers. */
export interface ConfigServerTools {
  readonly tools: readonly Tool[];
  /** Disconnects from every server (a stdio server's process group ends). */
  close(): Promise<void>;
}

function serverOptions(name: string, entry: GhostMcpStdioServer | GhostMcpHttpServer): McpToolsOptions {
  if ('url' in entry) return { name, url: entry.url, ...(entry.headers ? { headers: entry.headers } : {}) };
  return {
    name,
    command: entry.command,
    args: entry.args,
    // What MCP clients conventionally give a server they start (PATH, HOME, USER, ...), so that
    // `npx` or `uvx` are found, plus the entry's own variables; never the rest of ours.
    env: { ...getDefaultEnvironment(), ...entry.env },
    ...(entry.cwd === undefined ? {} : { cwd: entry.cwd }),
  };
}

async function closeAll(servers: readonly McpServerTools[]): Promise<void> {
  const results = await Promise.allSettled(servers.map((server) => server.close()));
  const failures = results.flatMap((result) =>
    result.status === 'rejected' ? [result.reason as Error] : [],
  );
  if (failures.length > 0) {
    throw new CleanupError(
      `ghost-mcp could not disconnect from ${failures.length} MCP server(s): ${failures.map((failure) => failure.message).join('; ')}`,
      { cause: failures[0] },
    );
  }
}

/**
 * Connects to the MCP servers a config names, all at once, through `mcpTools()` from
 * `@ghost/mcp-client`, and returns their tools (named `<server>_<tool>`) as they were listed at start.
 * When one cannot be reached, the others are disconnected and the error says which failed.
 */
export async function openConfigServerTools(config: GhostMcpConfig): Promise<ConfigServerTools> {
  const entries = Object.entries(config.servers);
  const results = await Promise.allSettled(
    entries.map(([name, entry]) => mcpTools(serverOptions(name, entry))),
  );
  const connected = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const failed = results.find((result) => result.status === 'rejected');
  if (failed !== undefined) {
    await closeAll(connected);
    throw failed.reason;
  }
  return {
    tools: connected.flatMap((server) => server.tools),
    close: () => closeAll(connected),
  };
}
