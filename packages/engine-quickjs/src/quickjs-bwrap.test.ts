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
    const opening = openCodeModeSession({ engine: quickjsEngine, sandbox: missing });
    await expect(opening).rejects.toBeInstanceOf(SandboxUnavailableError);
    await expect(opening).rejects.toThrow(
      /^Sandbox 'bwrap' cannot contain programs on this machine: the bwrap binary \/nonexistent\/bwrap does not exist or is not executable\.$/,
    );
  });
});
