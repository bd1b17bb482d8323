import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openCodeModeSession } from '@ghost/code-mode';
import { describeEngineConformance } from '@ghost/code-mode/testing';
import { SandboxUnavailableError } from '@ghost/core';
import { defineSandboxBackend, type SandboxSpawnSpec } from '@ghost/core/sandbox';
import { bwrapSandbox, createBwrapSandbox } from '@ghost/sandbox-bwrap';
import { describe, expect, it } from 'vitest';
import { quickjsEngine } from './quickjs-engine.js';

// The engine layer and the OS layer together: every conformance case in the bubblewrap sandbox.
// The backend object, not the name 'bwrap': tests run from the repository root, which does not
// itself depend on @ghost/sandbox-bwrap (the registry's lookup by name is tested in sandbox-bwrap).
describeEngineConformance({ engine: quickjsEngine, sandbox: bwrapSandbox });

describe('code mode where bubblewrap cannot run', () => {
  it('refuses to start, says what is missing, and never falls back to running unconfined', async () => {
    const missing = createBwrapSandbox({ bwrapPath: '/nonexistent/bwrap' });
    // A private temporary directory, to see that the refused session left nothing in it.
    const temporary = await mkdtemp(join(tmpdir(), 'ghost-refusal-'));
    const previous = process.env.TMPDIR;
    process.env.TMPDIR = temporary;
    try {
      const opening = openCodeModeSession({ engine: quickjsEngine, sandbox: missing });
      await expect(opening).rejects.toBeInstanceOf(SandboxUnavailableError);
      await expect(opening).rejects.toThrow(
        /^Sandbox 'bwrap' cannot contain programs on this machine: the bwrap binary \/nonexistent\/bwrap does not exist or is not executable\.$/,
      );
      expect(await readdir(temporary)).toEqual([]);
    } finally {
      if (previous === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = previous;
      await rm(temporary, { recursive: true, force: true });
    }
  });
});

describe('what code mode asks of the native sandbox for each host', () => {
  it('no network, no subprocesses, and OS limits with room for the host beside the engine limits', async () => {
    // The real bubblewrap backend, with each spawn spec recorded on its way in.
    const specs: SandboxSpawnSpec[] = [];
    const recording = defineSandboxBackend({
      ...bwrapSandbox,
      spawn: (spec) => {
        specs.push(spec);
        return bwrapSandbox.spawn(spec);
      },
    });
    const opened = await openCodeModeSession({
      engine: quickjsEngine,
      sandbox: recording,
      limits: { memoryBytes: 32 * 1024 * 1024, cpuSeconds: 2, fileBytes: 4096 },
    });
    try {
      expect((await opened.session.execute('6 * 7')).value).toBe(42);
    } finally {
      await opened.close();
    }
    expect(specs.length).toBeGreaterThan(0);
    for (const spec of specs) {
      expect(spec).toMatchObject({ env: {}, network: 'none', subprocesses: 'deny' });
      expect(spec.limits).toEqual({
        memoryBytes: (32 + 160) * 1024 * 1024,
        cpuSeconds: 2 + 3,
        fileBytes: 4096,
        openFiles: 256,
        processes: 64,
      });
    }
  });
});
