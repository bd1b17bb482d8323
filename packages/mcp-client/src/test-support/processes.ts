import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { type AddressInfo, createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { ToolContext } from '@ghost/core';

const require = createRequire(import.meta.url);

/** server-everything's real entry point, started with this Node.js (never through npx). */
export const everythingEntry = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');

/** The in-test MCP server script. */
export const testServerScript = fileURLToPath(new URL('./test-mcp-server.mjs', import.meta.url));

/** A unique argument to find a server's processes with `ps`. */
export function newMarker(): string {
  return `--ghost-test-marker=${randomUUID()}`;
}

/** The command lines of running processes that carry `marker`. */
export function processesWith(marker: string): string[] {
  const listing = execFileSync('ps', ['-eo', 'pid=,stat=,args='], { encoding: 'utf8' });
  return listing.split('\n').filter((line) => line.includes(marker) && !/^\s*\d+\s+Z/.test(line));
}

/** Resolves once no process carries `marker`; rejects with the survivors after `timeoutMs`. */
export async function waitUntilGone(marker: string, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const left = processesWith(marker);
    if (left.length === 0) return;
    if (Date.now() > until) throw new Error(`Processes survived: ${left.join(' | ')}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Resolves once a process carries `marker`. */
export async function waitUntilRunning(marker: string, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (processesWith(marker).length === 0) {
    if (Date.now() > until) throw new Error(`No process with ${marker} started.`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A tool context for calling a tool's `execute` directly, outside a run. */
export function directContext(signal: AbortSignal = new AbortController().signal): ToolContext {
  return { signal, toolCallId: 'direct', run: undefined as never };
}

/** What `work` rejects with, or `undefined` when it succeeds. */
export async function failureOf(work: () => unknown): Promise<unknown> {
  try {
    await work();
    return undefined;
  } catch (error) {
    return error;
  }
}

/** A server process serving HTTP on 127.0.0.1, and how to end it. */
export interface HttpServerProcess {
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * Starts `args` with this Node.js and resolves once its output says which port it serves (a
 * free one: `PORT` is found here for servers that take it).
 */
export async function startHttpServer(
  args: readonly string[],
  env: Record<string, string>,
  portPattern: RegExp,
): Promise<HttpServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [...args], {
    env: { PATH: process.env.PATH ?? '', PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const servedPort = await new Promise<number>((resolve, reject) => {
    let output = '';
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const match = portPattern.exec(output);
      if (match) resolve(Number(match[1]));
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    void closed.then(() => reject(new Error(`The HTTP server exited before listening: ${output}`)));
  });
  return {
    url: `http://127.0.0.1:${servedPort}/mcp`,
    async stop() {
      child.kill('SIGKILL');
      await closed;
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
