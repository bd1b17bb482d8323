import { pathToFileURL } from 'node:url';
import type { Tool } from '@ghost/core';
import { GhostMcpConfigError } from './ghost-mcp-config-error.js';

function isTool(value: unknown): value is Tool {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { kind?: unknown }).kind === 'tool' &&
    typeof (value as { execute?: unknown }).execute === 'function'
  );
}

/**
 * Imports the config's `toolModules`: each module's default export is a list of Ghost tools (or
 * one tool). Anything else throws a {@link GhostMcpConfigError} that names the module.
 */
export async function importToolModules(paths: readonly string[]): Promise<Tool[]> {
  const tools: Tool[] = [];
  for (const path of paths) {
    let namespace: { default?: unknown };
    try {
      namespace = (await import(pathToFileURL(path).href)) as { default?: unknown };
    } catch (error) {
      throw new GhostMcpConfigError(
        `Tool module ${path} could not be imported: ${(error as Error).message}. Check the path in toolModules (relative paths start from the config file's directory).`,
        { code: 'GHOST_MCP_TOOL_MODULE_INVALID', path, cause: error },
      );
    }
    const exported = namespace.default;
    const list = Array.isArray(exported) ? exported : [exported];
    if (list.length === 0 || !list.every(isTool)) {
      throw new GhostMcpConfigError(
        `Tool module ${path} must export a list of Ghost tools as default: export default [defineTool({ ... })].`,
        { code: 'GHOST_MCP_TOOL_MODULE_INVALID', path },
      );
    }
    tools.push(...list);
  }
  return tools;
}
