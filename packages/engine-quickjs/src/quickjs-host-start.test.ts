import { openCodeModeSession } from '@ghost/code-mode';
import { descendantProcesses } from '@ghost/code-mode/testing';
import { defineTool } from '@ghost/core';
import Type from 'typebox';
import { afterEach, describe, expect, it } from 'vitest';
import { hostScript, hostV8Options } from './host-start.js';
import { quickjsEngine } from './quickjs-engine.js';

/** A tool that never returns, so a program stays running while the test looks at its host. */
const forever = defineTool({
  name: 'forever',
  description: 'Never returns.',
  input: Type.Object({}),
  execute: () => new Promise<never>(() => {}),
});

/** The command lines of this process's engine hosts. */
async function hostCommands(): Promise<string[]> {
  return (await descendantProcesses())
    .map((found) => found.command)
    .filter((line) => line.includes('dist/host.cjs'));
}

async function waitFor<T>(read: () => Promise<T>, isDone: (value: T) => boolean): Promise<T> {
  for (let attempt = 0; ; attempt += 1) {
    const value = await read();
    if (isDone(value) || attempt === 100) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('how a QuickJS host starts', () => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });

  async function open(prewarm: boolean, observationWindowMs = 50) {
    const opened = await openCodeModeSession({
      engine: quickjsEngine,
      sandbox: 'unrestricted',
      tools: [forever],
      prewarm,
      observationWindowMs,
    });
    closers.push(() => opened.close());
    return opened.session;
  }

  it('rehearses in a spare, and skips the rehearsal in a host a program is already waiting for', async () => {
    const prewarmed = await open(true);
    const [spare] = await waitFor(hostCommands, (commands) => commands.length === 1);
    expect(spare).not.toContain('--ghost-no-rehearsal');
    await prewarmed.close();

    const cold = await open(false);
    expect((await cold.execute('await tools.forever({})')).status).toBe('still_working');
    expect(await hostCommands()).toEqual([expect.stringContaining('--ghost-no-rehearsal')]);
    expect((await cold.stop()).status).toBe('terminated');
  });

  it('runs a program in a host started without a rehearsal as in any other', async () => {
    // exec's window covers the host's start, which takes longer than 50 ms.
    const cold = await open(false, 60_000);
    const result = await cold.execute('console.log("one"); [1, { ok: true }]');
    expect(result).toEqual({ status: 'completed', output: 'one\n', value: [1, { ok: true }] });
  });

  it('starts hosts from the bundled script with the engine V8 flags, under the permission model', async () => {
    await open(true);
    const [spare] = await waitFor(hostCommands, (commands) => commands.length === 1);
    expect(spare).toContain(hostScript);
    for (const option of hostV8Options) expect(spare).toContain(` ${option} `);
    expect(spare).toMatch(/ --(experimental-)?permission /);
    expect(spare).not.toContain('--snapshot-blob');
  });
});
