import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { access, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { descendantProcesses } from '@ghost/code-mode/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';

// The built command, started as an MCP client would start it: `pnpm build` makes it.
const bin = fileURLToPath(new URL('../dist/ghost-mcp-cli.js', import.meta.url));
const weatherTools = fileURLToPath(new URL('./test-support/weather-tools.mjs', import.meta.url));
const inventoryServer = fileURLToPath(new URL('./test-support/inventory-mcp-server.mjs', import.meta.url));
const run = promisify(execFile);

let directory: string;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  await access(bin).catch(() => {
    throw new Error(`${bin} is missing: run pnpm build first.`);
  });
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A fresh directory with a config file, and a private TMPDIR for the command's workspaces. */
async function setUp(config: unknown) {
  directory = await mkdtemp(join(tmpdir(), 'ghost-mcp-test-'));
  cleanups.push(() => rm(directory, { recursive: true, force: true }));
  const temporary = join(directory, 'tmp');
  await mkdir(temporary);
  const configPath = join(directory, 'ghost-mcp.json');
  await writeFile(configPath, typeof config === 'string' ? config : JSON.stringify(config));
  return { configPath, temporary };
}

async function hostProcesses() {
  return (await descendantProcesses()).filter(
    (found) =>
      found.command.includes('host.cjs') ||
      found.command.includes('bwrap') ||
      found.command.includes('inventory-mcp-server'),
  );
}

async function isRunning(pid: number): Promise<boolean> {
  return access(`/proc/${pid}`).then(
    () => true,
    () => false,
  );
}

async function exec(client: Client, source: string) {
  return (await client.callTool({ name: 'exec', arguments: { source } })) as CallToolResult;
}

/**
 * Runs a program with `exec`, then `wait`s while it is still working and `more` says so, with the
 * output of every observation joined: exec's 500 ms window covers the host's start, which a
 * loaded machine may not finish in time.
 */
async function execObserving(client: Client, source: string, more: (output: string) => boolean) {
  let result = await exec(client, source);
  let output = '';
  for (;;) {
    const content = result.structuredContent as { status: string; output: string; error?: string };
    output += content.output;
    if (content.status !== 'still_working' || !more(output)) {
      return { ...result, structuredContent: { ...content, output } };
    }
    result = (await client.callTool({ name: 'wait', arguments: {} })) as CallToolResult;
  }
}

/** Runs a program to its end (see {@link execObserving}). */
function execToEnd(client: Client, source: string) {
  return execObserving(client, source, () => true);
}

async function failure(configPath: string) {
  const result = await run(process.execPath, [bin, '--config', configPath]).then(
    () => ({ code: 0, stderr: '' }),
    (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
  );
  return result;
}

describe('ghost-mcp over stdio', () => {
  it('serves code mode to the SDK client and cleans up when the client closes', async () => {
    const { configPath, temporary } = await setUp({
      toolModules: [weatherTools],
      limits: { wallSeconds: 600 },
      observationWindowMs: 500,
    });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bin, '--config', configPath],
      env: { ...(process.env as Record<string, string>), TMPDIR: temporary },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    await client.connect(transport);
    const pid = transport.pid as number;

    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['exec', 'wait', 'stop']);
    const description = tools[0]?.description ?? '';
    expect(description).toContain('weather(args: {');
    expect(description).toContain('Builds a report slowly.');
    expect(description).toContain("'bwrap' sandbox");

    const both = await execToEnd(
      client,
      `const [paris, oslo] = await Promise.all([tools.weather({ city: 'Paris' }), tools.weather({ city: 'Oslo' })]);
paris.temperature - oslo.temperature`,
    );
    expect(both.structuredContent).toEqual({ status: 'completed', output: '', value: 4 });

    const failed = await execToEnd(client, `await tools.weather({ city: 'Atlantis' })`);
    expect(failed.isError).toBe(true);
    expect((failed.structuredContent as { error: string }).error).toContain('No weather station in Atlantis');

    const running = await execObserving(
      client,
      `text('working'); await tools.slow_report({})`,
      (output) => output === '',
    );
    expect(running.structuredContent).toEqual({ status: 'still_working', output: 'working\n' });
    const waited = (await client.callTool({ name: 'wait', arguments: {} })) as CallToolResult;
    expect(waited.structuredContent).toEqual({ status: 'still_working', output: '' });
    const stopped = (await client.callTool({ name: 'stop', arguments: {} })) as CallToolResult;
    expect(stopped.structuredContent).toMatchObject({ status: 'terminated' });

    await execToEnd(client, 'await tools.weather({ city: "Oslo" })');
    expect((await readdir(temporary)).length).toBeGreaterThan(0);
    await client.close();
    expect(await isRunning(pid)).toBe(false);
    expect(await hostProcesses()).toEqual([]);
    expect(await readdir(temporary)).toEqual([]);
  }, 120_000);
});

/** Starts `ghost-mcp --http` and reads the URL it prints on standard error. */
async function startHttp(configPath: string, temporary: string, extra: string[] = []) {
  const child = spawn(process.execPath, [bin, '--config', configPath, '--http', '--port', '0', ...extra], {
    env: { ...process.env, TMPDIR: temporary },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  cleanups.push(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
    await exited;
  });
  let stderr = '';
  const url = await new Promise<URL>((resolve, reject) => {
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      stderr += chunk;
      const found = /at (http:\/\/\S+)/.exec(stderr);
      if (found?.[1]) resolve(new URL(found[1]));
    });
    child.once('exit', () => reject(new Error(`ghost-mcp --http exited: ${stderr}`)));
  });
  return { child, url, exited };
}

async function stopWith(child: ChildProcess, exited: Promise<number | null>, signal: NodeJS.Signals) {
  child.kill(signal);
  return exited;
}

describe('ghost-mcp over the MCP servers of its config', () => {
  it("serves code mode over a server's tools and ends that server with the session", async () => {
    const { configPath, temporary } = await setUp({
      servers: { inventory: { command: process.execPath, args: [inventoryServer] } },
      toolModules: [weatherTools],
    });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bin, '--config', configPath],
      env: { ...(process.env as Record<string, string>), TMPDIR: temporary },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    await client.connect(transport);
    const pid = transport.pid as number;
    const description = (await client.listTools()).tools[0]?.description ?? '';
    expect(description).toContain('inventory_stock(args: {');
    expect(description).toContain('How many of an item are in stock.');
    expect((await hostProcesses()).some((found) => found.command.includes('inventory-mcp-server'))).toBe(
      true,
    );

    const counted = await execToEnd(
      client,
      `const [apples, pears, paris] = await Promise.all([
  tools.inventory_stock({ item: 'apples' }),
  tools.inventory_stock({ item: 'pears' }),
  tools.weather({ city: 'Paris' }),
]);
({ fruit: apples.count + pears.count, temperature: paris.temperature })`,
    );
    expect(counted.structuredContent).toEqual({
      status: 'completed',
      output: '',
      value: { fruit: 15, temperature: 21 },
    });
    const refused = await execToEnd(
      client,
      `try { await tools.inventory_restock({ item: 'kiwis' }) } catch (error) { text(error.message) }`,
    );
    expect(refused.structuredContent).toMatchObject({ status: 'completed' });
    expect((refused.structuredContent as { output: string }).output).toContain('The supplier has no kiwis.');

    await client.close();
    expect(await isRunning(pid)).toBe(false);
    expect(await hostProcesses()).toEqual([]);
    expect(await readdir(temporary)).toEqual([]);
  }, 120_000);

  it('names the server it could not start', async () => {
    const { configPath } = await setUp({
      servers: { broken: { command: process.execPath, args: ['-e', 'process.exit(3)'] } },
    });
    const { code, stderr } = await failure(configPath);
    expect(code).toBe(1);
    expect(stderr).toContain('broken');
  });
});

describe('ghost-mcp --http', () => {
  it('serves sessions on 127.0.0.1 and cleans up every one on SIGTERM', async () => {
    const { configPath, temporary } = await setUp({ toolModules: [weatherTools], observationWindowMs: 500 });
    const { child, url, exited } = await startHttp(configPath, temporary);
    expect(url.hostname).toBe('127.0.0.1');
    const first = new Client({ name: 'first', version: '1.0.0' });
    const second = new Client({ name: 'second', version: '1.0.0' });
    await first.connect(new StreamableHTTPClientTransport(url));
    await second.connect(new StreamableHTTPClientTransport(url));
    cleanups.push(async () => {
      await first.close();
      await second.close();
    });
    const running = await exec(first, `await tools.slow_report({})`);
    expect(running.structuredContent).toMatchObject({ status: 'still_working' });
    const done = await execToEnd(second, `(await tools.weather({ city: 'Paris' })).temperature`);
    expect(done.structuredContent).toEqual({ status: 'completed', output: '', value: 21 });
    expect((await hostProcesses()).length).toBeGreaterThan(0);

    expect(await stopWith(child, exited, 'SIGTERM')).toBe(0);
    expect(await hostProcesses()).toEqual([]);
    expect(await readdir(temporary)).toEqual([]);
  }, 120_000);
});

describe('ghost-mcp configuration errors', () => {
  it('names a missing config file and how to make one', async () => {
    const { code, stderr } = await failure(join(tmpdir(), 'no-such-dir', 'ghost-mcp.json'));
    expect(code).toBe(1);
    expect(stderr).toContain('GHOST_MCP_CONFIG_NOT_FOUND');
    expect(stderr).toContain('--config');
  });

  it('says where the JSON is broken', async () => {
    const { configPath } = await setUp('{ "servers": { }, }');
    const { code, stderr } = await failure(configPath);
    expect(code).toBe(1);
    expect(stderr).toContain('GHOST_MCP_CONFIG_JSON_INVALID');
    expect(stderr).toContain(configPath);
  });

  it('names an unknown key and the known ones', async () => {
    const { configPath } = await setUp({ toolModules: [weatherTools], sandboxx: 'native' });
    const { code, stderr } = await failure(configPath);
    expect(code).toBe(1);
    expect(stderr).toContain('GHOST_MCP_CONFIG_KEY_UNKNOWN: ');
    expect(stderr).toContain("no key 'sandboxx'");
    expect(stderr).toContain('sandbox');
  });

  it('names a malformed server entry', async () => {
    const { configPath } = await setUp({
      servers: { files: { command: 'node', url: 'http://127.0.0.1:1/mcp' } },
    });
    const { code, stderr } = await failure(configPath);
    expect(code).toBe(1);
    expect(stderr).toContain('GHOST_MCP_CONFIG_SERVER_INVALID');
    expect(stderr).toContain('servers.files');
  });

  it('refuses bad flags with the usage and exit code 2', async () => {
    const result = await run(process.execPath, [bin, '--port', '80']).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect((result as { code: number }).code).toBe(2);
    expect((result as { stderr: string }).stderr).toContain('--port and --host go with --http');
  });
});
