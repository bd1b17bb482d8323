import { describeEngineConformance } from '@ghost/code-mode/testing';
import { bwrapSandbox } from '@ghost/sandbox-bwrap';
import { describe } from 'vitest';
import { isolatedVmHereProblem, needingIsolatedVm, v8EngineHere } from './test-support/isolated-vm-here.js';

describe.skipIf(isolatedVmHereProblem !== undefined)(
  needingIsolatedVm('the V8 engine in a sandboxed session host'),
  () => {
    // One sandboxed host serves a session's programs, a fresh isolate each: every conformance case
    // still holds, a catastrophic V8 error included (it retires the host).
    describeEngineConformance({ engine: v8EngineHere, sandbox: bwrapSandbox, placement: 'session' });
  },
);
