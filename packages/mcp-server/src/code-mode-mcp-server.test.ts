import { access, readdir } from 'node:fs/promises';
import { descendantProcesses } from '@ghost/code-mode/testing';
import { defineTool, ToolError } from '@ghost/core';
import { quickjsEngine } from '@ghost/engine-quickjs';
import { bwrapSandbox } from '@ghost/sandbox-bwrap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import Type from 'typebox';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type CodeModeMcpOptions,
  createCodeModeMcpServer,
  type PreparedCodeModeMcp,
  prepareCodeModeMcp,
} from './code-mode-mcp.js';
import type { CodeModeMcpServer } from './code-mode-mcp-server.js';
import { slowReportTool } from './test-support/slow-report-tool.js';

const weather = defineTool({
  name: 'weather',
  description: 'The temperature in a city, in °C.',
  input: Type.Object({ city: Type.String() }),
  execute: ({ city }) => {
    if (city === 'Atlantis') throw new ToolError('No weather station in Atlantis.');
    return { city, temperature: city === 'Paris' ? 21 : 17 };
  },
});

let calls: string[] = [];
const recorded = defineTool({
  name: 'record',
  description: 'Records a note.',
  input: Type.Object({ note: Type.String() }),
  execute: ({ note }) => {
    calls.push(note);
    return { recorded: note };
  },
});

const opened: { client: Client; server: CodeModeMcpServer; prepared?: PreparedCodeModeMcp }[] = [];

async function connect(options: Partial<CodeModeMcpOptions> = {}) {
  const prepared = await prepareCodeModeMcp({
    tools: [weather, recorded, slowReportTool],
    engine: quickjsEngine,
    sandbox: bwrapSandbox,
    ...options,
  });
  const server = prepared.createServer();
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  await client.connect(clientSide);
  opened.push({ client, server, prepared });
  return { client, server, prepared };
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

async function hostProcesses() {
  return (await descendantProcesses()).filter(
    (found) => found.command.includes('host.cjs') || found.command.includes('bwrap'),
  );
}

afterEach(async () => {
  calls = [];
  for (const { client, server, prepared } of opened.splice(0)) {
    await client.close();
    await server.close();
    await prepared?.close();
  }
});

describe('createCodeModeMcpServer', () => {
  it('lists exec, wait and stop, with the instructions and the tool declarations in exec', async () => {
    const { client, prepared } = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['exec', 'wait', 'stop']);
    const exec = tools.find((tool) => tool.name === 'exec');
    expect(exec?.description).toContain('weather(args: {\n    city: string;');
    expect(exec?.description).toContain('The temperature in a city');
    expect(exec?.description).toContain("'bwrap' sandbox");
    expect(exec?.inputSchema.required).toEqual(['source']);
    expect(exec?.outputSchema?.properties).toHaveProperty('status');
    expect(prepared.sandboxName).toBe('bwrap');
    expect(client.getInstructions()).toContain('code mode');
  });

  it('runs a program in bubblewrap that calls several tools at once', async () => {
    const { client } = await connect();
    const result = await call(client, 'exec', {
      source: `const [paris, oslo] = await Promise.all([tools.weather({ city: 'Paris' }), tools.weather({ city: 'Oslo' })]);
await tools.record({ note: 'checked' });
text('both read');
({ paris: paris.temperature, oslo: oslo.temperature })`,
    });
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toEqual({
      status: 'completed',
      output: 'both read\n',
      value: { paris: 21, oslo: 17 },
    });
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(result.structuredContent);
    expect(calls).toEqual(['checked']);
  });

  it('answers a failed program with isError and an error the model can read', async () => {
    const { client } = await connect();
    const result = await call(client, 'exec', { source: `await tools.weather({ city: 'Atlantis' })` });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ status: 'error' });
    expect((result.structuredContent as { error: string }).error).toContain('No weather station in Atlantis');
  });

  it('answers control calls that cannot run now with isError and a message', async () => {
    const { client } = await connect();
    const waited = await call(client, 'wait');
    expect(waited.isError).toBe(true);
    expect((waited.content[0] as { text: string }).text).toMatch(/no program|nothing/i);
    const invalid = await call(client, 'exec', { source: 42 });
    expect(invalid.isError).toBe(true);
  });

  it('keeps a long program running across wait, and stop ends it', async () => {
    const { client } = await connect({ observationWindowMs: 300 });
    let started = await call(client, 'exec', {
      source: `text('started'); await tools.slow_report({})`,
    });
    // exec's window covers the host's start: on a slow machine a wait sees the program's first output.
    while ((started.structuredContent as { output: string }).output === '') {
      started = await call(client, 'wait');
    }
    expect(started.structuredContent).toEqual({ status: 'still_working', output: 'started\n' });
    const waited = await call(client, 'wait');
    expect(waited.structuredContent).toEqual({ status: 'still_working', output: '' });
    expect((await hostProcesses()).length).toBeGreaterThan(0);
    const stopped = await call(client, 'stop');
    expect(stopped.structuredContent).toMatchObject({ status: 'terminated' });
    expect(stopped.isError).toBeUndefined();
  });

  it('ends its programs, host processes and workspaces when the client session ends', async () => {
    const { client, server, prepared } = await connect({ observationWindowMs: 300 });
    const started = await call(client, 'exec', { source: 'await tools.slow_report({})' });
    expect(started.structuredContent).toMatchObject({ status: 'still_working' });
    const workspaceRoot = await server.workspaceRoot;
    expect(workspaceRoot).toBeDefined();
    expect((await hostProcesses()).length).toBeGreaterThan(0);
    await client.close();
    await server.closed;
    expect(await hostProcesses()).toEqual([]);
    // The root belongs to the prepared code mode, which other sessions may share: empty now, gone once it closes.
    expect(await readdir(workspaceRoot as string)).toEqual([]);
    await expect(server.close()).resolves.toBeUndefined();
    await prepared.close();
    await expect(access(workspaceRoot as string)).rejects.toThrow();
  });

  it("createCodeModeMcpServer's server, when its client session ends, also closes the runtime and workspace root made for it", async () => {
    const server = await createCodeModeMcpServer({
      tools: [weather],
      engine: quickjsEngine,
      sandbox: bwrapSandbox,
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    await client.connect(clientSide);
    opened.push({ client, server });
    const result = await call(client, 'exec', {
      source: `(await tools.weather({ city: 'Paris' })).temperature`,
    });
    expect(result.structuredContent).toMatchObject({ status: 'completed', value: 21 });
    const workspaceRoot = await server.workspaceRoot;
    expect(workspaceRoot).toBeDefined();
    await client.close();
    await server.closed;
    expect(await hostProcesses()).toEqual([]);
    await expect(access(workspaceRoot as string)).rejects.toThrow();
  });

  it('starts nothing until the first control call', async () => {
    const { client, server } = await connect();
    await client.listTools();
    expect(await server.workspaceRoot).toBeUndefined();
    expect(await hostProcesses()).toEqual([]);
  });
});
