import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineHostEngine, openCodeModeSession } from '@ghost/code-mode';
import { descendantProcesses } from '@ghost/code-mode/testing';
import { defineTool } from '@ghost/core';
import Type from 'typebox';
import { afterEach, describe, expect, it } from 'vitest';
import { hostScript, hostSnapshotBlob, hostV8Options, isHostSnapshotUsable } from './host-start.js';
import { hostStartOptions } from './host-start-options.js';
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

  async function open(prewarm: boolean) {
    const opened = await openCodeModeSession({
      engine: quickjsEngine,
      sandbox: 'unrestricted',
      tools: [forever],
      prewarm,
      observationWindowMs: 50,
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
    const cold = await open(false);
    const result = await cold.execute('console.log("one"); [1, { ok: true }]');
    expect(result).toEqual({ status: 'completed', output: 'one\n', value: [1, { ok: true }] });
  });
});

/** The build makes the snapshot with the machine's Node; on the suite's LTS pass it is another Node's. */
const snapshotBuiltForThisNode = isHostSnapshotUsable();

describe.skipIf(!snapshotBuiltForThisNode)(
  snapshotBuiltForThisNode
    ? 'the startup snapshot'
    : `the startup snapshot (skipped: the build made it with another Node than ${process.version}, which then starts hosts from the script)`,
  () => {
    const directories: string[] = [];
    afterEach(async () => {
      for (const directory of directories.splice(0)) await rm(directory, { recursive: true, force: true });
    });

    it('is what hosts start from once the build made one for this Node', async () => {
      expect(isHostSnapshotUsable()).toBe(true);
      expect(hostStartOptions().nodeOptions).toContain(`--snapshot-blob=${hostSnapshotBlob}`);
      const opened = await openCodeModeSession({
        engine: quickjsEngine,
        sandbox: 'unrestricted',
        tools: [forever],
      });
      try {
        const [spare] = await waitFor(hostCommands, (commands) => commands.length === 1);
        expect(spare).toContain('--snapshot-blob=');
        // Node applies the permission model to a host started from a snapshot as to any other.
        expect(spare).toMatch(/ --(experimental-)?permission /);
        expect(await opened.session.execute('"from the snapshot"')).toMatchObject({
          value: 'from the snapshot',
        });
      } finally {
        await opened.close();
      }
    });

    it('is not used when another Node built it, or when it is gone', async () => {
      const directory = await mkdtemp(join(tmpdir(), 'ghost-snapshot-test-'));
      directories.push(directory);
      const files = { blob: join(directory, 'host.blob'), stamp: join(directory, 'host.blob.json') };
      await copyFile(hostSnapshotBlob, files.blob);
      const stamp = JSON.parse(await readFile(`${hostSnapshotBlob}.json`, 'utf8')) as Record<string, unknown>;
      await writeFile(files.stamp, JSON.stringify(stamp));
      expect(isHostSnapshotUsable(files)).toBe(true);
      await writeFile(files.stamp, JSON.stringify({ ...stamp, node: 'v20.0.0 linux-x64' }));
      expect(isHostSnapshotUsable(files)).toBe(false);
      await writeFile(files.stamp, JSON.stringify({ ...stamp, v8Options: [] }));
      expect(isHostSnapshotUsable(files)).toBe(false);
      await writeFile(files.stamp, JSON.stringify(stamp));
      await rm(files.blob);
      expect(isHostSnapshotUsable(files)).toBe(false);
    });

    it('is not needed: a host started from the script runs programs the same', async () => {
      const fromScript = defineHostEngine({
        name: 'quickjs',
        language: quickjsEngine.language,
        runtimePaths: quickjsEngine.runtimePaths,
        placements: ['process'],
        instructions: quickjsEngine.instructions,
        host: { script: hostScript, nodeOptions: hostV8Options },
      });
      for (const prewarm of [true, false]) {
        const opened = await openCodeModeSession({ engine: fromScript, sandbox: 'unrestricted', prewarm });
        try {
          if (prewarm) await waitFor(hostCommands, (commands) => commands.length === 1);
          expect(await hostCommands()).not.toContainEqual(expect.stringContaining('--snapshot-blob'));
          const result = await opened.session.execute('console.log("one"); [1, { ok: true }]');
          expect(result).toEqual({ status: 'completed', output: 'one\n', value: [1, { ok: true }] });
        } finally {
          await opened.close();
        }
      }
    });
  },
);
