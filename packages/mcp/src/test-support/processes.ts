import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
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
