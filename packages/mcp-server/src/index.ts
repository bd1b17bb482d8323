/**
 * Ghost's code mode as an MCP server: any MCP client (a desktop assistant, a coding agent) gets
 * `exec`, `wait` and `stop`, and runs JavaScript programs that call your tools inside an
 * operating-system sandbox. Serve your own Ghost tools with {@link createCodeModeMcpServer}, or
 * run the `ghost-mcp` command over the tools of MCP servers named in a config file.
 *
 * @example
 * ```ts
 * import { createCodeModeMcpServer } from '@ghost/mcp-server';
 * import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
 *
 * const server = await createCodeModeMcpServer({ tools: [lookup] }); // sandbox: 'native'
 * await server.connect(new StdioServerTransport());
 * ```
 *
 * @packageDocumentation
 */
export {
  type CodeModeMcpOptions,
  type CodeModeMcpSettings,
  codeModeMcpDefaultPrograms,
  createCodeModeMcpServer,
  type PreparedCodeModeMcp,
  prepareCodeModeMcp,
} from './code-mode-mcp.js';
export {
  type CodeModeMcpHttpOptions,
  type CodeModeMcpHttpServer,
  listenCodeModeMcpHttp,
} from './code-mode-mcp-http.js';
export { CodeModeMcpServer } from './code-mode-mcp-server.js';
export {
  type GhostMcpStreams,
  type RunningGhostMcp,
  startGhostMcp,
} from './ghost-mcp.js';
export { type GhostMcpArguments, ghostMcpUsage, parseGhostMcpArguments } from './ghost-mcp-arguments.js';
export {
  type GhostMcpConfig,
  type GhostMcpHttpServer,
  type GhostMcpHttpSettings,
  type GhostMcpStdioServer,
  loadGhostMcpConfig,
  parseGhostMcpConfig,
} from './ghost-mcp-config.js';
export {
  GhostMcpConfigError,
  type GhostMcpConfigErrorCode,
  type GhostMcpConfigErrorInit,
  type McpServerErrorCode,
} from './ghost-mcp-config-error.js';
