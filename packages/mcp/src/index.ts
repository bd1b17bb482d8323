export {
  McpConfigurationError,
  McpConnectionError,
  McpLimitError,
  McpServerClosedError,
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
