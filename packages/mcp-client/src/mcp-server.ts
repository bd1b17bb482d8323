import type { ToolSource } from '@ghost/core';
import type { OpenedToolSource } from '@ghost/core/plugin';
import type { McpToolsOptions } from './mcp-options.js';
import { resolveMcpOptions } from './mcp-options.js';
import { connectMcpServer } from './mcp-tools.js';

/**
 * An MCP server connected per run: each run that uses the agent starts (or reaches) the server
 * when it starts and closes it when it ends, so no connection or process outlives a run. Use
 * `mcpTools()` instead to connect once and share the connection between runs. Options are
 * checked here, so a mistake throws when the agent is defined.
 *
 * @example
 * ```ts
 * const agent = defineAgent({
 *   name: 'assistant',
 *   model,
 *   tools: [mcpServer({ name: 'everything', command: process.execPath, args: [serverEntry] })],
 * });
 * ```
 */
export function mcpServer(options: McpToolsOptions): ToolSource {
  const resolved = resolveMcpOptions(options, 'mcpServer()');
  return Object.freeze({
    kind: 'tool-source' as const,
    name: resolved.name,
    async open(): Promise<OpenedToolSource> {
      const server = await connectMcpServer(resolved);
      return {
        get tools() {
          return server.tools;
        },
        onChange: (listener: () => void) => server.onChange(listener),
        close: () => server.close(),
      };
    },
  });
}
