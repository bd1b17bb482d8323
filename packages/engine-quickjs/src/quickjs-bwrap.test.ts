import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openCodeModeSession } from '@ghost/code-mode';
import { describeEngineConformance } from '@ghost/code-mode/testing';
import { SandboxUnavailableError } from '@ghost/core';
import { createBwrapSandbox } from '@ghost/sandbox-bwrap';
import { describe, expect, it } from 'vitest';
import { quickjsEngine } from './quickjs-engine.js';

// The engine layer and the OS layer together: every conformance case in the bubblewrap sandbox.
describeEngineConformance({ engine: quickjsEngine, sandbox: 'bwrap' });

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
