/**
 * For applications: MCP servers as Ghost tools. `mcpServer({...})` connects to a server over stdio
 * or Streamable HTTP and gives an agent its tools as a tool source; `mcpTools(...)` lists them
 * once. Serving code mode over MCP is `@ghost/mcp-server`.
 *
 * @example
 * ```ts
 * import { mcpServer } from '@ghost/mcp-client';
 * ```
 *
 * @packageDocumentation
 */

export {
  McpConfigurationError,
  McpConnectionError,
  type McpErrorCode,
  type McpErrorInit,
  McpLimitError,
  McpServerClosedError,
  McpToolError,
} from './errors.js';
export {
  defaultMcpLimits,
  type McpCommonOptions,
  type McpHttpOptions,
  type McpLimits,
  type McpStdioOptions,
  type McpToolsOptions,
} from './mcp-options.js';
export { mcpServer } from './mcp-server.js';
export { type McpServerTools, mcpTools } from './mcp-tools.js';
