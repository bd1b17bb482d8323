import type { Tool, ToolSource } from '@ghost/core';
import type { OpenedToolSource } from '@ghost/core/plugin';
import { McpConnection } from './mcp-connection.js';
import { type McpToolsOptions, type ResolvedMcpOptions, resolveMcpOptions } from './mcp-options.js';
import { toGhostTools } from './mcp-tool.js';

/**
 * A connected MCP server: its tools as Ghost tools, and a tool source for agents. Put
 * `...server.tools` in an agent's tools for a fixed snapshot, or `server` itself to follow the
 * server's tool list as it changes. Either way the connection lives until `close()`.
 */
export interface McpServerTools extends ToolSource {
  /** The server's tools now, as Ghost tools (prefixed names, input and output schemas). */
  readonly tools: readonly Tool[];
  /** The server's `name`. */
  readonly name: string;
  /** Calls `listener` after the server's tool list changed and `tools` was read again. */
  onChange(listener: () => void): () => void;
  /**
   * Ends the connection: a stdio server and everything it started are ended (and waited for), an HTTP
   * session is terminated. Idempotent. Calls in flight fail with `McpServerClosedError`.
   */
  close(): Promise<void>;
}

/**
 * Connects to an MCP server over stdio (`command`) or Streamable HTTP (`url`) and returns its
 * tools as Ghost tools. Results become tool values: `structuredContent` when the tool declares an
 * output schema, otherwise its text; images and resources become artifacts; `isError` becomes a
 * `ToolError`. A stdio server gets exactly the `env` given here, and never outlives this process.
 *
 * @example
 * ```ts
 * const files = await mcpTools({ name: 'files', command: 'npx', args: ['@modelcontextprotocol/server-filesystem', dir],
 *   env: { PATH: process.env.PATH ?? '' } });
 * const agent = defineAgent({ name: 'assistant', model, tools: [files], codeMode: codeMode() });
 * // ...
 * await files.close();
 * ```
 */
export async function mcpTools(options: McpToolsOptions): Promise<McpServerTools> {
  return connectMcpServer(resolveMcpOptions(options, 'mcpTools()'));
}

/** Connects with checked options; shared by `mcpTools()` and `mcpServer()`. */
export async function connectMcpServer(options: ResolvedMcpOptions): Promise<McpServerTools> {
  const connection = new McpConnection(options);
  await connection.connect();
  let refreshing: Promise<void> | undefined;
  const factory = {
    serverName: options.name,
    toolPrefix: options.toolPrefix,
    timeoutMs: options.timeoutMs,
    connection,
    listSettled: () => refreshing ?? Promise.resolve(),
  };
  let tools: readonly Tool[];
  try {
    tools = Object.freeze(toGhostTools(await connection.listTools(), factory));
  } catch (error) {
    await connection.close().catch(() => {});
    throw error;
  }
  const listeners = new Set<() => void>();
  let isRefreshWanted = false;
  // Notices that arrive during a refresh fold into one more refresh, so the list read last wins.
  const refresh = async (): Promise<void> => {
    while (isRefreshWanted) {
      isRefreshWanted = false;
      try {
        tools = Object.freeze(toGhostTools(await connection.listTools(), factory));
      } catch {
        // A list that cannot be read or used keeps the previous tools; calls say what is wrong.
        continue;
      }
      for (const listener of listeners) listener();
    }
  };
  connection.onListChange(() => {
    isRefreshWanted = true;
    // refresh() never rejects: a failed read keeps the previous tools.
    refreshing ??= refresh().finally(() => {
      refreshing = undefined;
    });
  });
  let closing: Promise<void> | undefined;
  const server: McpServerTools = {
    kind: 'tool-source',
    name: options.name,
    get tools() {
      return tools;
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    // A server connected once serves every run: a run's open and close leave the connection be.
    async open(): Promise<OpenedToolSource> {
      const unsubscribers = new Set<() => void>();
      return {
        get tools() {
          return tools;
        },
        onChange(listener) {
          const unsubscribe = server.onChange(listener);
          unsubscribers.add(unsubscribe);
          return unsubscribe;
        },
        async close() {
          for (const unsubscribe of unsubscribers) unsubscribe();
        },
      };
    },
    close() {
      listeners.clear();
      closing ??= connection.close();
      return closing;
    },
  };
  return server;
}
