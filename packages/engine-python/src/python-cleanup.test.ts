import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openCodeModeSession } from '@ghost/code-mode';
import { descendantProcesses } from '@ghost/code-mode/testing';
import { createRuntime } from '@ghost/core';
import { bwrapSandbox } from '@ghost/sandbox-bwrap';
import { describe, expect, it } from 'vitest';
import { pythonEngine } from './python-engine.js';
import { bwrapDetection, bwrapUnavailable } from './test-support/python-session.js';

// These run in bubblewrap, the sandbox Python programs get. Where it cannot run (macOS, a kernel
// without user namespaces) the name says why; setup installs it and checks it runs on Linux.
describe.skipIf(!bwrapDetection.available)(
  `the Python engine's hosts${bwrapUnavailable}`,
  { timeout: 120_000 },
  () => {
    it("runs the README's program", async () => {
      const { session, close } = await openCodeModeSession({ engine: pythonEngine, sandbox: bwrapSandbox });
      try {
        const result = await session.execute('squares = [n * n for n in range(4)]\nsum(squares)');
        expect(result).toEqual({ status: 'completed', output: '', value: 14 });
      } finally {
        await close();
      }
    });

    it('leave no process and no workspace once the session closes, after programs that end every way', async () => {
      const workspaceRoot = await mkdtemp(join(tmpdir(), 'ghost-python-cleanup-'));
      const runtime = createRuntime({ workspaceRoot });
      try {
        const { session, close } = await openCodeModeSession({
          engine: pythonEngine,
          sandbox: bwrapSandbox,
          runtime,
          limits: { cpuSeconds: 1 },
        });
        expect((await session.execute('"done"')).value).toBe('done');
        expect((await session.execute('raise ValueError("no")')).error).toBe('ValueError: no (line 1)');
        expect((await session.execute('while True: pass')).status).toBe('error');
        const running = await session.execute('import asyncio\nawait asyncio.sleep(60)', {
          observationWindowMs: 200,
        });
        expect(running.status).toBe('still_working');
        await close();
        await runtime.close();
        await expect.poll(descendantProcesses, { timeout: 10_000, interval: 100 }).toEqual([]);
        expect(await readdir(workspaceRoot)).toEqual([]);
      } finally {
        await runtime.close();
        await rm(workspaceRoot, { recursive: true, force: true });
      }
    });
  },
);
