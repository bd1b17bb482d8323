import { openCodeModeSession } from '@ghost/code-mode';
import { describeEngineConformance } from '@ghost/code-mode/testing';
import { defineSandboxBackend, type SandboxSpawnSpec } from '@ghost/core/sandbox';
import { quickjsEngine } from '@ghost/engine-quickjs';
import { describe, expect, it } from 'vitest';
import { seatbeltSandbox } from './index.js';

// Code mode end to end in seatbelt: every engine conformance case with QuickJS hosts started by
// the real sandbox-exec. Only macOS can run them; elsewhere they skip, the reason in their names.
const isMac = process.platform === 'darwin';
const where = isMac ? 'macOS' : `skipped: needs macOS and /usr/bin/sandbox-exec; this is ${process.platform}`;

describe.skipIf(!isMac)(`code mode in the real seatbelt sandbox (${where})`, () => {
  // The backend object, not the name: tests run from the repository root, which does not itself
  // depend on @ghost/sandbox-seatbelt (the lookup of 'native' is tested in seatbelt-native.test.ts).
  describeEngineConformance({ engine: quickjsEngine, sandbox: seatbeltSandbox });

  it('asks seatbelt for no network, no subprocesses and the OS limits, and runs the program', async () => {
    // The real backend, with each spawn spec recorded on its way in.
    const specs: SandboxSpawnSpec[] = [];
    const recording = defineSandboxBackend({
      ...seatbeltSandbox,
      spawn: (spec) => {
        specs.push(spec);
        return seatbeltSandbox.spawn(spec);
      },
    });
    const opened = await openCodeModeSession({ engine: quickjsEngine, sandbox: recording });
    try {
      expect((await opened.session.execute('6 * 7')).value).toBe(42);
    } finally {
      await opened.close();
    }
    expect(specs.length).toBeGreaterThan(0);
    for (const spec of specs) {
      expect(spec).toMatchObject({ network: 'none', subprocesses: 'deny' });
      expect(Object.keys(spec.limits ?? {}).sort()).toEqual([
        'cpuSeconds',
        'fileBytes',
        'memoryBytes',
        'openFiles',
      ]);
    }
  });
});
