// A small MCP server for ghost-mcp's tests, on the SDK's own server classes, started over stdio
// by a config file's "servers" entry. `stock` answers with structured content, `restock` fails.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const stock = { apples: 12, pears: 3 };
const server = new McpServer({ name: 'inventory', version: '1.0.0' });
server.registerTool(
  'stock',
  {
    description: 'How many of an item are in stock.',
    inputSchema: { item: z.string() },
    outputSchema: { item: z.string(), count: z.number() },
  },
  async ({ item }) => {
    const result = { item, count: stock[item] ?? 0 };
    return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
  },
);
server.registerTool(
  'restock',
  { description: 'Orders more of an item.', inputSchema: { item: z.string() } },
  async ({ item }) => ({ content: [{ type: 'text', text: `The supplier has no ${item}.` }], isError: true }),
);
await server.connect(new StdioServerTransport());
