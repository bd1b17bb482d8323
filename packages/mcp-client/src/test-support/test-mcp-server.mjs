// A small MCP server for the tests, on the SDK's real server classes. MODE=tools (default) has
// tools for slow calls, crashes, huge answers, errors, images and tool-list changes;
// MODE=paginate lists PAGES pages of 10 tools ('forever' never stops paginating); MODE=http
// serves the tools over Streamable HTTP on 127.0.0.1 (a free port, printed as `port <n>`),
// answering 404 to a session it has forgotten (tool `forget-sessions`), as the spec says.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const tinyPng =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

const httpSessions = new Map();
let sessionsCreated = 0;

function toolsServer() {
  const server = new McpServer({ name: 'ghost-test', version: '1.0.0' });
  const cancelled = [];
  const extra = new Map();
  server.registerTool(
    'slow',
    { description: 'Waits ms milliseconds.', inputSchema: { ms: z.number() } },
    async ({ ms }, context) =>
      new Promise((resolve) => {
        const timer = setTimeout(() => resolve({ content: [{ type: 'text', text: `waited ${ms}` }] }), ms);
        context.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          cancelled.push({ requestId: context.requestId, reason: String(context.signal.reason) });
          resolve({ content: [{ type: 'text', text: 'cancelled' }] });
        });
      }),
  );
  server.registerTool(
    'cancelled-calls',
    {
      description: 'The calls the client cancelled so far.',
      outputSchema: {
        calls: z.array(z.object({ requestId: z.union([z.string(), z.number()]), reason: z.string() })),
      },
    },
    async () => ({
      content: [{ type: 'text', text: JSON.stringify(cancelled) }],
      structuredContent: { calls: cancelled },
    }),
  );
  server.registerTool('crash', { description: 'Exits the server in the middle of the call.' }, async () => {
    setTimeout(() => process.exit(3), 20);
    return new Promise(() => {});
  });
  server.registerTool(
    'huge',
    { description: 'Answers with a text of `bytes` bytes.', inputSchema: { bytes: z.number() } },
    async ({ bytes }) => ({ content: [{ type: 'text', text: 'x'.repeat(bytes) }] }),
  );
  server.registerTool('fail', { description: 'Always fails.' }, async () => ({
    isError: true,
    content: [{ type: 'text', text: 'The order does not exist.' }],
  }));
  server.registerTool('picture', { description: 'A text and an image.' }, async () => ({
    content: [
      { type: 'text', text: 'a red dot' },
      { type: 'image', data: tinyPng, mimeType: 'image/png' },
      {
        type: 'resource',
        resource: { uri: 'file:///notes/readme.txt', mimeType: 'text/plain', text: 'hello' },
      },
    ],
  }));
  server.registerTool(
    'add-tool',
    {
      description: 'Adds a tool `name` that answers `answer`.',
      inputSchema: { name: z.string(), answer: z.string() },
    },
    async ({ name, answer }) => {
      extra.set(
        name,
        server.registerTool(
          name,
          { description: `Answers ${answer}.`, outputSchema: { answer: z.string() } },
          async () => ({ content: [{ type: 'text', text: answer }], structuredContent: { answer } }),
        ),
      );
      return { content: [{ type: 'text', text: `added ${name}` }] };
    },
  );
  // EXTRA_TOOL=<name> offers one more tool from the start, named as the test needs (`exit`, say).
  if (process.env.EXTRA_TOOL) {
    const name = process.env.EXTRA_TOOL;
    server.registerTool(
      name,
      { description: `Answers ${name}.`, outputSchema: { answer: z.string() } },
      async () => ({ content: [{ type: 'text', text: name }], structuredContent: { answer: name } }),
    );
  }
  server.registerTool(
    'remove-tool',
    { description: 'Removes a tool added by add-tool.', inputSchema: { name: z.string() } },
    async ({ name }) => {
      extra.get(name)?.remove();
      extra.delete(name);
      return { content: [{ type: 'text', text: `removed ${name}` }] };
    },
  );
  server.registerTool(
    'request-header',
    { description: 'The value of one request header.', inputSchema: { name: z.string() } },
    async ({ name }, context) => ({
      content: [{ type: 'text', text: String(context.requestInfo?.headers?.[name] ?? '') }],
    }),
  );
  server.registerTool('forget-sessions', { description: 'Forgets every HTTP session.' }, async () => {
    httpSessions.clear();
    return { content: [{ type: 'text', text: 'forgotten' }] };
  });
  server.registerTool(
    'sessions-created',
    { description: 'How many HTTP sessions were created.', outputSchema: { created: z.number() } },
    async () => ({
      content: [{ type: 'text', text: String(sessionsCreated) }],
      structuredContent: { created: sessionsCreated },
    }),
  );
  return server;
}

function serveHttp() {
  const http = createServer(async (request, response) => {
    const sessionId = request.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const transport = httpSessions.get(sessionId);
      if (!transport) {
        response.writeHead(404, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }),
        );
        return;
      }
      await transport.handleRequest(request, response);
      return;
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessionsCreated += 1;
        httpSessions.set(id, transport);
      },
    });
    await toolsServer().connect(transport);
    await transport.handleRequest(request, response);
  });
  http.listen(0, '127.0.0.1', () => process.stdout.write(`port ${http.address().port}\n`));
}

function paginatingServer() {
  const pages = process.env.PAGES ?? '1';
  const server = new Server({ name: 'ghost-paginate', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async (request) => {
    const page = Number(request.params?.cursor ?? '0');
    const tools = Array.from({ length: 10 }, (_, index) => ({
      name: `tool_${page}_${index}`,
      description: 'A tool on a page.',
      inputSchema: { type: 'object', properties: {} },
    }));
    const isLast = pages !== 'forever' && page + 1 >= Number(pages);
    return { tools, ...(isLast ? {} : { nextCursor: String(page + 1) }) };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request) => ({
    content: [{ type: 'text', text: `called ${request.params.name}` }],
  }));
  return server;
}

if (process.env.MODE === 'http') {
  serveHttp();
} else {
  const server = process.env.MODE === 'paginate' ? paginatingServer() : toolsServer();
  await server.connect(new StdioServerTransport());
}

// DETACH=setsid starts a child that leaves the server's process group and session (setsid) and
// keeps its stderr; DETACH=daemon a daemon that forks twice, so its parent is gone. Each carries
// the server's marker (its first argument) and ignores SIGTERM, so only SIGKILL ends it.
const idleForever = "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000);";
if (process.env.DETACH === 'setsid') {
  spawn(process.execPath, ['-e', idleForever, '--', `${process.argv[2]}-setsid`], {
    detached: true,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}
if (process.env.DETACH === 'daemon') {
  const daemon = `require('node:child_process').spawn(process.execPath, ['-e', ${JSON.stringify(idleForever)}, '--', process.argv[1] + '-daemon'], { detached: true, stdio: 'ignore' }).unref();`;
  spawn(process.execPath, ['-e', daemon, '--', process.argv[2]], { detached: true, stdio: 'ignore' }).unref();
}

if (process.env.STUBBORN === '1') {
  // A server that ignores SIGTERM and stdin's end: only SIGKILL ends it.
  process.on('SIGTERM', () => {});
  setInterval(() => {}, 1000);
  process.stderr.write('stubborn server ready\n');
}
