import { ToolError, type ToolResult } from '@ghost/core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type McpServerTools, mcpTools } from './index.js';
import {
  directContext,
  everythingEntry,
  failureOf,
  type HttpServerProcess,
  startHttpServer,
  testServerScript,
} from './test-support/processes.js';

function toolNamed(server: McpServerTools, name: string) {
  const tool = server.tools.find((candidate) => candidate.name === name);
  if (!tool) throw new Error(`No tool ${name} among ${server.tools.map((each) => each.name).join(', ')}`);
  return tool;
}

describe('mcpTools() over Streamable HTTP, against server-everything', () => {
  let http: HttpServerProcess;
  let server: McpServerTools;

  beforeAll(async () => {
    http = await startHttpServer([everythingEntry, 'streamableHttp'], {}, /listening on port (\d+)/);
    server = await mcpTools({ name: 'everything', url: http.url });
  }, 30_000);

  afterAll(async () => {
    await server?.close();
    await http?.stop();
  });

  test('lists the tools, with output schemas', () => {
    expect(server.tools.map((tool) => tool.name)).toContain('everything_echo');
    expect(toolNamed(server, 'everything_get-structured-content').outputJsonSchema).toMatchObject({
      properties: { temperature: { type: 'number' } },
    });
  });

  test('calls a tool: text, and structured content as the value', async () => {
    const echo = (await toolNamed(server, 'everything_echo').execute(
      { message: 'over http' },
      directContext(),
    )) as ToolResult;
    expect(echo.value).toBe('Echo: over http');
    const weather = (await toolNamed(server, 'everything_get-structured-content').execute(
      { location: 'New York' },
      directContext(),
    )) as ToolResult;
    expect(weather.value).toMatchObject({ temperature: expect.any(Number), conditions: expect.any(String) });
  });

  test('an error result becomes a ToolError', async () => {
    const tool = toolNamed(server, 'everything_get-sum');
    const failure = await failureOf(() => tool.execute({ a: 'one', b: 2 }, directContext()));
    expect(ToolError.isInstance(failure)).toBe(true);
  });
});

describe('mcpTools() over Streamable HTTP, against the test server', () => {
  let http: HttpServerProcess;

  beforeAll(async () => {
    http = await startHttpServer([testServerScript], { MODE: 'http' }, /port (\d+)/);
  }, 30_000);

  afterAll(async () => {
    await http?.stop();
  });

  test('sends the headers the application names', async () => {
    const server = await mcpTools({ name: 'test', url: http.url, headers: { 'x-tenant': 'acme' } });
    try {
      const result = (await toolNamed(server, 'test_request-header').execute(
        { name: 'x-tenant' },
        directContext(),
      )) as ToolResult;
      expect(result.value).toBe('acme');
    } finally {
      await server.close();
    }
  });

  test('a session the server has forgotten (404) is reconnected, and the call goes through', async () => {
    const server = await mcpTools({ name: 'test', url: http.url });
    try {
      const count = async () =>
        ((await toolNamed(server, 'test_sessions-created').execute({}, directContext())) as ToolResult)
          .value as {
          created: number;
        };
      const before = (await count()).created;
      await toolNamed(server, 'test_forget-sessions').execute({}, directContext());
      const after = await count();
      expect(after.created).toBe(before + 1);
    } finally {
      await server.close();
    }
  });

  test('a message over maxMessageBytes is refused; the next call opens a new session', async () => {
    const server = await mcpTools({ name: 'test', url: http.url, limits: { maxMessageBytes: 64 * 1024 } });
    try {
      const huge = toolNamed(server, 'test_huge');
      const failure = await failureOf(() => huge.execute({ bytes: 1_000_000 }, directContext()));
      expect((failure as { code?: string }).code).toBe('MCP_LIMIT_EXCEEDED');
      const small = (await huge.execute({ bytes: 10 }, directContext())) as ToolResult;
      expect(small.value).toBe('x'.repeat(10));
    } finally {
      await server.close();
    }
  });
});
