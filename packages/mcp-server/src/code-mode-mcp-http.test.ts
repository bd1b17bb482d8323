import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { descendantProcesses } from '@ghost/code-mode/testing';
import { defineTool } from '@ghost/core';
import { quickjsEngine } from '@ghost/engine-quickjs';
import { bwrapSandbox } from '@ghost/sandbox-bwrap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import Type from 'typebox';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { type PreparedCodeModeMcp, prepareCodeModeMcp } from './code-mode-mcp.js';
import { type CodeModeMcpHttpServer, listenCodeModeMcpHttp } from './code-mode-mcp-http.js';
import { otherUid, otherUserNode, otherUserSkipReason } from './test-support/other-user.js';
import { slowReportTool } from './test-support/slow-report-tool.js';

/** A counter per caller: programs of different sessions must never see each other's calls. */
const counts = new Map<string, number>();
const count = defineTool({
  name: 'count',
  description: 'Adds one to the named counter and returns it.',
  input: Type.Object({ name: Type.String() }),
  execute: ({ name }) => {
    const next = (counts.get(name) ?? 0) + 1;
    counts.set(name, next);
    return { name, value: next };
  },
});

let served: CodeModeMcpHttpServer | undefined;
let prepared: PreparedCodeModeMcp | undefined;
const clients: Client[] = [];

/** A tool that answers after `ms` milliseconds. */
const pause = defineTool({
  name: 'pause',
  description: 'Answers after ms milliseconds.',
  input: Type.Object({ ms: Type.Number() }),
  execute: ({ ms }) => new Promise((resolve) => setTimeout(() => resolve({ paused: ms }), ms)),
});

async function serve(options: Parameters<typeof listenCodeModeMcpHttp>[1] = {}, observationWindowMs = 300) {
  prepared = await prepareCodeModeMcp({
    tools: [count, slowReportTool, pause],
    engine: quickjsEngine,
    sandbox: bwrapSandbox,
    observationWindowMs,
  });
  served = await listenCodeModeMcpHttp(prepared, options);
  return served;
}

async function connect(url: URL) {
  const transport = new StreamableHTTPClientTransport(url);
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

async function exec(client: Client, source: string) {
  return (await client.callTool({ name: 'exec', arguments: { source } })) as CallToolResult;
}

/**
 * Runs a program with `exec`, then `wait`s while it is still working and `more` says so, with the
 * output of every observation joined: a loaded machine can start the host after the 300 ms window.
 */
async function execObserving(client: Client, source: string, more: (output: string) => boolean) {
  let result = await exec(client, source);
  let output = '';
  for (;;) {
    const content = result.structuredContent as { status: string; output: string };
    output += content.output;
    if (content.status !== 'still_working' || !more(output)) return { ...content, output };
    result = (await client.callTool({ name: 'wait', arguments: {} })) as CallToolResult;
  }
}

/** Runs a program to its end (see {@link execObserving}). */
function execToEnd(client: Client, source: string) {
  return execObserving(client, source, () => true);
}

async function hostProcesses() {
  return (await descendantProcesses()).filter(
    (found) => found.command.includes('host.cjs') || found.command.includes('bwrap'),
  );
}

/** Engine hosts alive: one Node process each, inside its bubblewrap processes. */
async function hostCount() {
  const hosts = (await hostProcesses()).filter((found) => !found.command.split(' ')[0]?.endsWith('bwrap'));
  return hosts.length;
}

/** Sends one raw request, with headers a browser page would send but the SDK's client never does. */
function rawRequest(url: URL, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          body += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      },
    );
    request.on('error', reject);
    request.end(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'page', version: '1' },
        },
      }),
    );
  });
}

/** Sends an initialize request from a process running as `uid`; resolves with the status it got. */
async function initializeAs(uid: number, url: URL): Promise<number> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'other', version: '1' } },
  });
  const source = `
    const request = require('node:http').request(process.argv[1], {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    }, (response) => { process.stdout.write(String(response.statusCode)); response.resume(); });
    request.end(process.argv[2]);`;
  const child = spawn(otherUserNode as string, ['-e', source, url.href, body], {
    uid,
    gid: uid,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  await once(child, 'close');
  return Number(output);
}

afterEach(async () => {
  counts.clear();
  for (const client of clients.splice(0)) await client.close();
  await served?.close();
  served = undefined;
  await prepared?.close();
  prepared = undefined;
});

describe('listenCodeModeMcpHttp', () => {
  it('listens on 127.0.0.1 and serves exec over Streamable HTTP', async () => {
    const { url } = await serve();
    expect(url.hostname).toBe('127.0.0.1');
    const { client } = await connect(url);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['exec', 'wait', 'stop']);
    const result = await execToEnd(
      client,
      `const [a, b] = await Promise.all([tools.count({ name: 'x' }), tools.count({ name: 'y' })]); [a.value, b.value]`,
    );
    expect(result).toEqual({ status: 'completed', output: '', value: [1, 1] });
  });

  it('keeps two client sessions apart, each with its own program', async () => {
    const served = await serve();
    const first = await connect(served.url);
    const second = await connect(served.url);
    expect(first.transport.sessionId).not.toBe(second.transport.sessionId);
    expect(served.sessionCount).toBe(2);
    const running = await execObserving(
      first.client,
      `text('first'); await tools.slow_report({})`,
      (output) => output === '',
    );
    expect(running).toEqual({ status: 'still_working', output: 'first\n' });
    // The second session has no program running, and its own exec is not refused by the first's.
    const waited = (await second.client.callTool({ name: 'wait', arguments: {} })) as CallToolResult;
    expect(waited.isError).toBe(true);
    const other = await execToEnd(second.client, `text('second'); 2`);
    expect(other).toEqual({ status: 'completed', output: 'second\n', value: 2 });
    const stopped = (await first.client.callTool({ name: 'stop', arguments: {} })) as CallToolResult;
    expect(stopped.structuredContent).toMatchObject({ status: 'terminated', output: '' });
  });

  it('closes a session, its programs and its processes when the client ends it', async () => {
    const served = await serve();
    const { client, transport } = await connect(served.url);
    const running = await exec(client, `await tools.slow_report({})`);
    expect(running.structuredContent).toMatchObject({ status: 'still_working' });
    expect((await hostProcesses()).length).toBeGreaterThan(0);
    const sessionId = transport.sessionId as string;
    await transport.terminateSession();
    expect(served.sessionCount).toBe(0);
    expect(await hostProcesses()).toEqual([]);
    const late = await rawRequest(served.url, { 'mcp-session-id': sessionId });
    expect(late.status).toBe(404);
    expect(late.body).toContain('No such session');
  });

  it('closes every session when the server closes', async () => {
    const served = await serve();
    const { client } = await connect(served.url);
    await exec(client, `await tools.slow_report({})`);
    expect((await hostProcesses()).length).toBeGreaterThan(0);
    await served.close();
    expect(served.sessionCount).toBe(0);
    expect(await hostProcesses()).toEqual([]);
  });

  it('closes the session of a client that went away without ending it, with its program', async () => {
    const served = await serve({ sessionIdleSeconds: 1 });
    const { client } = await connect(served.url);
    await exec(client, `await tools.slow_report({})`);
    expect((await hostProcesses()).length).toBeGreaterThan(0);
    // Closing the client drops its connections but sends no DELETE: only the idle check can tell.
    await client.close();
    expect(served.sessionCount).toBe(1);
    while (served.sessionCount > 0) await new Promise((resolve) => setTimeout(resolve, 100));
    while ((await hostProcesses()).length > 0) await new Promise((resolve) => setTimeout(resolve, 100));
  });

  it('refuses requests whose Host or Origin names another site (DNS rebinding)', async () => {
    const { url } = await serve();
    const rebound = await rawRequest(url, { host: `attacker.example:${url.port}` });
    expect(rebound.status).toBe(403);
    expect(rebound.body).toContain('attacker.example');
    const page = await rawRequest(url, { origin: 'https://attacker.example' });
    expect(page.status).toBe(403);
    const local = await rawRequest(url, { origin: `http://localhost:${url.port}` });
    expect(local.status).toBe(200);
  });

  it('refuses sessions beyond maxSessions until one ends', async () => {
    const served = await serve({ maxSessions: 1 });
    const first = await connect(served.url);
    const refused = new Client({ name: 'second', version: '1.0.0' });
    await expect(refused.connect(new StreamableHTTPClientTransport(served.url))).rejects.toThrow(/limit/);
    await first.transport.terminateSession();
    await connect(served.url);
    expect(served.sessionCount).toBe(1);
  });

  it.skipIf(otherUserNode === undefined)(
    `limits the sessions one client holds: a second user still gets one when the first is at its limit${otherUserSkipReason}`,
    async () => {
      const served = await serve({ maxSessions: 3, maxSessionsPerClient: 2 });
      await connect(served.url);
      await connect(served.url);
      const third = await rawRequest(served.url, {});
      expect(third.status).toBe(429);
      expect(third.body).toContain(`This client (user ${process.getuid?.()}) holds 2 sessions`);
      expect(served.sessionCount).toBe(2);
      // Another user of this machine, from its own process: its session is not the first one's to take.
      expect(await initializeAs(otherUid, served.url)).toBe(200);
      expect(served.sessionCount).toBe(3);
    },
  );

  it('answers 408 to a request whose headers never finish, and closes its connection', async () => {
    const served = await serve({ headersTimeoutMs: 500 });
    const socket = netConnect(Number(served.url.port), '127.0.0.1');
    onTestFinished(() => {
      socket.destroy();
    });
    socket.write(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${served.url.port}\r\nContent-Type: application/json\r\n`,
    );
    let answer = '';
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString();
    });
    await once(socket, 'close');
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('closes a connection that sends nothing', async () => {
    const served = await serve({ idleTimeoutMs: 500 });
    const socket = netConnect(Number(served.url.port), '127.0.0.1');
    onTestFinished(() => {
      socket.destroy();
    });
    await once(socket, 'connect');
    await once(socket, 'close');
    expect(socket.bytesRead).toBe(0);
  });

  it('keeps a connection that waits for its answer past idleTimeoutMs', async () => {
    const served = await serve({ idleTimeoutMs: 300 }, 20_000);
    const { client } = await connect(served.url);
    const result = await exec(client, '(await tools.pause({ ms: 1500 })).paused');
    expect(result.structuredContent).toMatchObject({ status: 'completed', value: 1500 });
  });

  it('serves every client session from one runtime: N sessions share its spare hosts, and close leaves no host or directory', async () => {
    // Directories the prepared code mode makes go under a temporary directory of this test's own.
    const temporary = await mkdtemp(join(tmpdir(), 'ghost-mcp-http-pool-'));
    vi.stubEnv('TMPDIR', temporary);
    try {
      const served = await serve();
      const sessions = [];
      for (let index = 0; index < 5; index += 1) sessions.push(await connect(served.url));
      // Run to their end: five hosts starting at once may outlast exec's 300 ms window.
      const results = await Promise.all(
        sessions.map(({ client }, index) =>
          execToEnd(client, `(await tools.count({ name: 'pool ${index}' })).value`),
        ),
      );
      for (const result of results) expect(result).toMatchObject({ status: 'completed', value: 1 });
      expect(served.sessionCount).toBe(5);
      // No program runs now, so every host left is a pooled spare: at most the pool's cap of 2,
      // where a pool per session would keep one spare for each of the five.
      await vi.waitFor(async () => expect(await hostCount()).toBeLessThanOrEqual(2), { timeout: 20_000 });
      const second = await execToEnd(
        sessions[0]?.client as Client,
        `(await tools.count({ name: 'pool 0' })).value`,
      );
      expect(second).toMatchObject({ status: 'completed', value: 2 });
      await vi.waitFor(async () => expect(await hostCount()).toBeLessThanOrEqual(2), { timeout: 20_000 });

      await served.close();
      await prepared?.close();
      expect(await hostProcesses()).toEqual([]);
      expect(await readdir(temporary)).toEqual([]);
    } finally {
      vi.unstubAllEnvs();
      await rm(temporary, { recursive: true, force: true });
    }
  });

  it('rejects bad options with a typed error', async () => {
    const codeMode = await prepareCodeModeMcp({
      tools: [count],
      engine: quickjsEngine,
      sandbox: bwrapSandbox,
    });
    onTestFinished(() => codeMode.close());
    await expect(listenCodeModeMcpHttp(codeMode, { port: -1 })).rejects.toMatchObject({
      code: 'GHOST_MCP_HTTP_OPTION_INVALID',
    });
  });
});
