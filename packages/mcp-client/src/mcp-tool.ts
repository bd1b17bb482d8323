import { defineTool, type Tool } from '@ghost/core';
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { TObject, TSchema } from 'typebox';
import { McpConnectionError } from './errors.js';
import type { McpConnection } from './mcp-connection.js';
import { toolResultOf } from './mcp-result.js';

/** What turns one server's MCP tools into Ghost tools. */
export interface McpToolFactory {
  readonly serverName: string;
  readonly toolPrefix: string;
  readonly timeoutMs: number;
  readonly connection: McpConnection;
  /**
   * Resolves once a tool-list refresh that is under way has finished. A server announces a list
   * change before it answers the call that made it, so a call that waits for this returns only
   * once the new tools are in place (the next program or model turn sees them).
   */
  readonly listSettled?: () => Promise<void>;
}

/** How deeply a server's schema may nest: deeper ones are refused before anything walks them. */
const maxSchemaDepth = 64;

function depthOf(value: unknown): number {
  // An explicit stack, so a hostile schema cannot exhaust the call stack here either.
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop() as [unknown, number];
    if (typeof current !== 'object' || current === null) continue;
    deepest = Math.max(deepest, depth);
    if (deepest > maxSchemaDepth) return deepest;
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  return deepest;
}

/** The Ghost name of an MCP tool: the prefix, then the MCP name with other characters as `_`. */
function ghostToolName(toolPrefix: string, mcpName: string): string {
  return `${toolPrefix}${mcpName.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

/**
 * Turns a server's MCP tools into Ghost tools: prefixed names, the server's description, its
 * input schema, and its output schema when it declares one (so code mode's catalog gives the
 * tool a typed return). A name that is too long or that two tools share after normalising is an
 * `McpConnectionError`, as is a schema Ghost cannot compile.
 */
export function toGhostTools(mcpTools: readonly McpTool[], factory: McpToolFactory): Tool[] {
  const { serverName, toolPrefix, timeoutMs, connection, listSettled } = factory;
  const byName = new Map<string, string>();
  const tools: Tool[] = [];
  for (const mcpTool of mcpTools) {
    const name = ghostToolName(toolPrefix, mcpTool.name);
    const earlier = byName.get(name);
    if (earlier !== undefined) {
      throw new McpConnectionError(
        `MCP server '${serverName}' has tools '${earlier}' and '${mcpTool.name}', which both become '${name}'.`,
        { server: serverName, tool: name },
      );
    }
    byName.set(name, mcpTool.name);
    const mcpName = mcpTool.name;
    if (depthOf(mcpTool.inputSchema) > maxSchemaDepth || depthOf(mcpTool.outputSchema) > maxSchemaDepth) {
      throw new McpConnectionError(
        `MCP server '${serverName}' offers tool '${mcpName}' with a schema nested deeper than ${maxSchemaDepth} levels, which Ghost refuses.`,
        { server: serverName, tool: mcpName },
      );
    }
    try {
      tools.push(
        defineTool({
          name,
          description:
            mcpTool.description ?? mcpTool.title ?? `The '${mcpName}' tool of MCP server '${serverName}'.`,
          // MCP schemas are JSON Schema objects, which typebox compiles and code mode renders as is.
          input: mcpTool.inputSchema as unknown as TObject,
          ...(mcpTool.outputSchema !== undefined
            ? { output: mcpTool.outputSchema as unknown as TSchema }
            : {}),
          timeoutMs,
          execute: async (input, context) => {
            const result = await connection.callTool(mcpName, input, context.signal);
            await listSettled?.();
            return toolResultOf(result, name);
          },
        }),
      );
    } catch (cause) {
      throw new McpConnectionError(
        `MCP server '${serverName}' offers tool '${mcpName}', which Ghost cannot use: ${cause instanceof Error ? cause.message : String(cause)}`,
        { cause, server: serverName, tool: mcpName },
      );
    }
  }
  return tools;
}
