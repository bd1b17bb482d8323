import { describe, expect, it } from 'vitest';
import type { McpConnection } from './mcp-connection.js';
import { toGhostTools } from './mcp-tool.js';

const factory = {
  serverName: 'files',
  toolPrefix: 'files_',
  timeoutMs: 1_000,
  // Defining tools never calls the server.
  connection: {} as McpConnection,
};
const objectSchema = { type: 'object' as const, properties: {} };

describe('toGhostTools', () => {
  it('prefixes names and turns characters a Ghost tool name cannot have into _', () => {
    const tools = toGhostTools([{ name: 'read.file/v2', inputSchema: objectSchema }], factory);
    expect(tools.map((tool) => tool.name)).toEqual(['files_read_file_v2']);
    expect(tools[0]?.description).toBe("The 'read.file/v2' tool of MCP server 'files'.");
  });

  it('refuses two tools that become the same name', () => {
    expect(() =>
      toGhostTools(
        [
          { name: 'read.file', inputSchema: objectSchema },
          { name: 'read_file', inputSchema: objectSchema },
        ],
        factory,
      ),
    ).toThrow(/'read.file' and 'read_file', which both become 'files_read_file'/);
  });

  it('refuses a name that is too long for a tool', () => {
    expect(() => toGhostTools([{ name: 'x'.repeat(70), inputSchema: objectSchema }], factory)).toThrow(
      /which Ghost cannot use: Tool name .* is invalid/,
    );
  });

  it('refuses a schema nested past 64 levels before anything walks it recursively', () => {
    let schema: Record<string, unknown> = { type: 'string' };
    for (let level = 0; level < 10_000; level += 1) {
      schema = { type: 'object', properties: { next: schema } };
    }
    expect(() =>
      toGhostTools([{ name: 'deep', inputSchema: schema as typeof objectSchema }], factory),
    ).toThrow(/nested deeper than 64 levels/);
  });
});
