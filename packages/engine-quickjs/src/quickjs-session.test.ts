import { readdir } from 'node:fs/promises';
import { openCodeModeSession } from '@ghost/code-mode';
import { describeEngineConformance, serveSessionInProcess } from '@ghost/code-mode/testing';
import { defineTool } from '@ghost/core';
import { bwrapSandbox } from '@ghost/sandbox-bwrap';
import Type from 'typebox';
import { afterEach, describe, expect, it } from 'vitest';
import { createQuickJSDriver } from './quickjs-driver.js';
import { quickjsEngine } from './quickjs-engine.js';
import { readQuickJSWasm } from './quickjs-wasm.js';

// One sandboxed host serves a session's programs: every conformance case still holds, in bubblewrap.
describeEngineConformance({ engine: quickjsEngine, sandbox: bwrapSandbox, placement: 'session' });

const echo = defineTool({
  name: 'echo',
  description: 'Returns its input.',
  input: Type.Object({ text: Type.String() }),
  execute: ({ text }) => text,
});

describe("placement 'session'", () => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });

  /** A session whose host workspaces can be listed: one `ghost-program-*` directory per host. */
  async function openSession() {
    const opened = await openCodeModeSession({
      engine: quickjsEngine,
      sandbox: bwrapSandbox,
      placement: 'session',
      tools: [echo],
    });
    closers.push(() => opened.close());
    const hosts = () => readdir(opened.workspaceRoot);
    return { session: opened.session, hosts, opened };
  }

  it('serves completed programs from one host, each in a fresh guest that sees nothing of the last', async () => {
    const { session, hosts } = await openSession();
    const first = await session.execute(
      'globalThis.left = "behind"; Object.prototype.polluted = true; Array.prototype.push = null; await tools.echo({ text: "one" })',
    );
    expect(first).toEqual({ status: 'completed', output: '', value: 'one' });
    const [host] = await hosts();
    const second = await session.execute(
      '[typeof left, ({}).polluted === undefined, typeof [].push, await tools.echo({ text: "two" })]',
    );
    expect(second).toEqual({
      status: 'completed',
      output: '',
      value: ['undefined', true, 'function', 'two'],
    });
    expect(await hosts()).toEqual([host]);
  });

  it('retires the host after a program that fails, and the next program runs in a fresh one', async () => {
    const { session, hosts } = await openSession();
    await session.execute('1');
    const [first] = await hosts();
    const failed = await session.execute('throw new Error("boom")');
    expect(failed.status).toBe('error');
    expect(await session.execute('2')).toMatchObject({ status: 'completed', value: 2 });
    // The retired host's workspace goes once the host is reaped, just after the failure.
    await expect.poll(hosts).toHaveLength(1);
    expect(await hosts()).not.toContain(first);
  });

  it('retires the host after a stop and after a limit hit', async () => {
    const { session, hosts } = await openSession();
    await session.execute('1');
    const [first] = await hosts();
    const running = await session.execute('for (;;) {}', { observationWindowMs: 50 });
    expect(running.status).toBe('still_working');
    expect((await session.stop()).status).toBe('terminated');
    expect(await session.execute('2')).toMatchObject({ status: 'completed', value: 2 });
    const [second] = await hosts();
    expect(second).not.toBe(first);
    const bomb = await session.execute(
      'const parts = []; for (;;) parts.push("x".repeat(1 << 20) + parts.length);',
    );
    expect(bomb.status).toBe('error');
    expect(await session.execute('3')).toMatchObject({ status: 'completed', value: 3 });
    expect(await hosts()).not.toContain(second);
  });

  it('leaves no host or workspace behind when the session closes', async () => {
    const { session, opened } = await openSession();
    await session.execute('1');
    await opened.close();
    expect(await readdir(opened.workspaceRoot).catch(() => [])).toEqual([]);
  });
});

describe('a reusable host', () => {
  // Two programs that complete, then one that fails, which ends any host: the fourth never runs.
  const programs = ['return 1', 'return 1', 'throw new Error("last")', 'return 1'];
  const limits = { outputBytes: 1024, memoryBytes: 16 * 1024 * 1024, cpuSeconds: 10, wallSeconds: 10 };

  /** Serves `programs` in-process on one host, as a host process would; each result says how its program ended. */
  async function statusesServed(hostBudget: { cpuSeconds: number; residentBytes: number }) {
    const driver = createQuickJSDriver(readQuickJSWasm());
    const results = await serveSessionInProcess(driver, { programs, limits, hostBudget });
    return results.map((result) => result.status);
  }

  it('ends after the program that takes it past its CPU or memory budget', async () => {
    expect(await statusesServed({ cpuSeconds: 0, residentBytes: Number.MAX_SAFE_INTEGER })).toEqual([
      'completed',
    ]);
    expect(await statusesServed({ cpuSeconds: 1_000, residentBytes: 0 })).toEqual(['completed']);
  });

  it('builds a fresh guest and answers ready again after each completed program within budget', async () => {
    expect(await statusesServed({ cpuSeconds: 1_000, residentBytes: Number.MAX_SAFE_INTEGER })).toEqual([
      'completed',
      'completed',
      'error',
    ]);
  });
});
