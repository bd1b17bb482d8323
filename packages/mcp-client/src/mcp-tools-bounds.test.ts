import { spawn } from 'node:child_process';
import { createRuntime, defineAgent, ToolError, type ToolResult } from '@ghost/core';
import type { ModelToolMessage } from '@ghost/core/provider';
import { ScriptedModel } from '@ghost/core/testing';
import { afterEach, describe, expect, test } from 'vitest';
import { type McpServerTools, type McpToolsOptions, mcpServer, mcpTools } from './index.js';
import { launcherSpawnPlan } from './stdio-process-transport.js';
import {
  directContext,
  failureOf,
  newMarker,
  processesWith,
  testServerScript,
  waitUntilGone,
  waitUntilRunning,
} from './test-support/processes.js';

const opened: McpServerTools[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((server) => server.close()));
});

async function connectTestServer(
  marker: string,
  options: Partial<McpToolsOptions> & { env?: Record<string, string> } = {},
): Promise<McpServerTools> {
  const server = await mcpTools({
    name: 'test',
    command: process.execPath,
    args: [testServerScript, marker],
    ...options,
  } as McpToolsOptions);
  opened.push(server);
  return server;
}

function toolNamed(server: McpServerTools, name: string) {
  const tool = server.tools.find((candidate) => candidate.name === name);
  if (!tool) throw new Error(`No tool ${name}`);
  return tool;
}

describe('mcpTools() keeps a server within bounds', () => {
  test('a call that outlives its timeout is cancelled on the server (notifications/cancelled)', async () => {
    const server = await connectTestServer(newMarker());
    const controller = new AbortController();
    const slow = toolNamed(server, 'test_slow').execute({ ms: 60_000 }, directContext(controller.signal));
    setTimeout(() => controller.abort(new Error('tool timeout')), 200);
    expect(await failureOf(() => slow)).toBeDefined();
    // The server's own record of the calls it was told to cancel.
    let calls: unknown[] = [];
    for (let attempt = 0; attempt < 50 && calls.length === 0; attempt += 1) {
      const result = (await toolNamed(server, 'test_cancelled-calls').execute(
        {},
        directContext(),
      )) as ToolResult;
      calls = (result.value as { calls: unknown[] }).calls;
      if (calls.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(calls).toEqual([
      { requestId: expect.anything(), reason: expect.stringContaining('tool timeout') },
    ]);
  });

  test("a call past the server's timeoutMs, in a run, times out for the model and is cancelled on the server", async () => {
    const server = await connectTestServer(newMarker(), { timeoutMs: 300 });
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'test_slow', input: { ms: 60_000 } }] },
      { toolCalls: [{ name: 'test_cancelled-calls', input: {} }] },
      { text: 'It took too long.' },
    ]);
    const agent = defineAgent({ name: 'assistant', model, tools: [server] });
    const run = await agent.ask('Wait a minute.', { runtime: createRuntime() });
    expect(run.outcome).toBe('completed');
    const results = (model.calls[2]?.messages ?? []).filter(
      (message): message is ModelToolMessage => message.role === 'tool',
    );
    expect(results[0]).toMatchObject({
      isError: true,
      content: expect.stringMatching(/timed out after 300 ms/),
    });
    expect(JSON.parse(results[1]?.content ?? '')).toEqual({
      calls: [{ requestId: expect.anything(), reason: expect.stringMatching(/timed out/) }],
    });
  });

  test('a server that crashes mid-call gives a typed McpServerClosedError, then every call does', async () => {
    const marker = newMarker();
    const server = await connectTestServer(marker);
    const failure = await failureOf(() => toolNamed(server, 'test_crash').execute({}, directContext()));
    expect(ToolError.isInstance(failure)).toBe(true);
    expect((failure as { code?: string }).code).toBe('MCP_SERVER_CLOSED');
    expect((failure as Error).message).toMatch(/exited \(code 3\)/);
    const next = await failureOf(() => toolNamed(server, 'test_fail').execute({}, directContext()));
    expect((next as { code?: string }).code).toBe('MCP_SERVER_CLOSED');
    await waitUntilGone(marker);
  });

  test('a response over maxMessageBytes is refused with McpLimitError and the connection closed', async () => {
    const marker = newMarker();
    const server = await connectTestServer(marker, { limits: { maxMessageBytes: 64 * 1024 } });
    const small = (await toolNamed(server, 'test_huge').execute(
      { bytes: 1_000 },
      directContext(),
    )) as ToolResult;
    expect(small.value).toHaveLength(1_000);
    const failure = await failureOf(() =>
      toolNamed(server, 'test_huge').execute({ bytes: 1_000_000 }, directContext()),
    );
    expect((failure as { code?: string }).code).toBe('MCP_LIMIT_EXCEEDED');
    expect((failure as Error).message).toMatch(/maxMessageBytes/);
    await waitUntilGone(marker);
  });

  test('an isError result becomes a ToolError with the server text', async () => {
    const server = await connectTestServer(newMarker());
    const failure = await failureOf(() => toolNamed(server, 'test_fail').execute({}, directContext()));
    expect(ToolError.isInstance(failure)).toBe(true);
    expect((failure as Error).message).toBe('The order does not exist.');
  });

  test('images and embedded resources become artifacts, text the value', async () => {
    const server = await connectTestServer(newMarker());
    const result = (await toolNamed(server, 'test_picture').execute({}, directContext())) as ToolResult;
    expect(result.value).toBe('a red dot');
    expect(result.artifacts.map((artifact) => [artifact.name, artifact.mediaType])).toEqual([
      ['test_picture-2.png', 'image/png'],
      ['readme.txt', 'text/plain'],
    ]);
    expect(result.artifacts[1]?.data).toBe('hello');
  });

  test('pagination is followed, and a server that paginates past maxListPages is refused', async () => {
    const server = await connectTestServer(newMarker(), { env: { MODE: 'paginate', PAGES: '3' } });
    expect(server.tools).toHaveLength(30);
    expect(server.tools[29]?.name).toBe('test_tool_2_9');
    const marker = newMarker();
    const failure = await failureOf(() =>
      connectTestServer(marker, { env: { MODE: 'paginate', PAGES: 'forever' }, limits: { maxListPages: 5 } }),
    );
    expect((failure as { code?: string }).code).toBe('MCP_LIMIT_EXCEEDED');
    expect((failure as Error).message).toMatch(/past 5 pages/);
    await waitUntilGone(marker);
  });

  test('a server listing more than maxTools tools is refused, not cut silently', async () => {
    const failure = await failureOf(() =>
      connectTestServer(newMarker(), { env: { MODE: 'paginate', PAGES: '3' }, limits: { maxTools: 25 } }),
    );
    expect((failure as { code?: string }).code).toBe('MCP_LIMIT_EXCEEDED');
    expect((failure as Error).message).toMatch(/more than 25 tools/);
  });

  test('a tool-list change refreshes tools and tells the listeners', async () => {
    const server = await connectTestServer(newMarker());
    const changed = new Promise<void>((resolve) => server.onChange(resolve));
    await toolNamed(server, 'test_add-tool').execute({ name: 'weather', answer: 'sunny' }, directContext());
    await changed;
    const weather = toolNamed(server, 'test_weather');
    expect(weather.outputJsonSchema).toMatchObject({ properties: { answer: { type: 'string' } } });
    expect(((await weather.execute({}, directContext())) as ToolResult).value).toEqual({ answer: 'sunny' });
  });

  test('a command that cannot start fails to connect with McpConnectionError', async () => {
    const failure = await failureOf(() =>
      mcpTools({ name: 'missing', command: '/nonexistent/mcp-server', env: {} }),
    );
    expect((failure as { code?: string }).code).toBe('MCP_CONNECTION_FAILED');
    expect((failure as Error).message).toMatch(/missing/);
  });

  test('a server that never answers the handshake fails naming connectTimeoutMs, not as an exit', async () => {
    const failure = await failureOf(() =>
      mcpTools({
        name: 'silent',
        command: process.execPath,
        args: ['-e', 'setInterval(() => {}, 1000)'],
        env: {},
        limits: { connectTimeoutMs: 500 },
      }),
    );
    expect((failure as { code?: string }).code).toBe('MCP_CONNECTION_FAILED');
    expect((failure as Error).message).toMatch(
      /^MCP server 'silent' did not complete the MCP handshake within 500 ms \(limits\.connectTimeoutMs\)\./,
    );
    expect((failure as Error).message).not.toMatch(/exited/);
  });

  test('options are checked when the server is described', () => {
    expect(() => mcpServer({ name: 'bad name', command: 'x' })).toThrow(/name/);
    expect(() => mcpServer({ name: 'ok', command: 'x', url: 'http://x' } as never)).toThrow(/not both/);
    expect(() => mcpServer({ name: 'ok', command: 'x', limits: { maxTools: 0 } })).toThrow(/maxTools/);
    expect(() => mcpServer({ name: 'ok', url: 'file:///x' })).toThrow(/http/);
    expect(() => mcpServer({ name: 'ok', command: 'x', envs: {} } as never)).toThrow(/no option 'envs'/);
  });
});

describe('a stdio server never outlives its parent', () => {
  test('when the parent is killed with SIGKILL, the watchdog ends the server (even one ignoring SIGTERM)', async () => {
    const marker = newMarker();
    const plan = launcherSpawnPlan({
      command: process.execPath,
      args: [testServerScript, marker],
      env: { STUBBORN: '1' },
    });
    // A parent process that starts the server exactly as StdioProcessTransport does, then idles.
    const parentSource = `
      const { spawn } = require('node:child_process');
      const plan = JSON.parse(process.argv[1]);
      spawn(plan.command, plan.args, { env: plan.env, stdio: ['pipe', 'pipe', 'inherit', 'pipe'] });
      setInterval(() => {}, 1000);
    `;
    const parent = spawn(process.execPath, ['-e', parentSource, JSON.stringify(plan)], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const parentExited = new Promise((resolve) => parent.once('close', resolve));
    // The server's stderr (through the parent): it has installed its SIGTERM handler.
    await new Promise<void>((resolve) => {
      let stderr = '';
      parent.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes('stubborn server ready')) resolve();
      });
    });
    await waitUntilRunning(`${testServerScript} ${marker}`);
    parent.kill('SIGKILL');
    await parentExited;
    await waitUntilGone(marker);
    expect(processesWith(marker)).toEqual([]);
  });
});
