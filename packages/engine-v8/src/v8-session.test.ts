import { describeEngineConformance } from '@ghost/code-mode/testing';
import { bwrapSandbox } from '@ghost/sandbox-bwrap';
import { v8Engine } from './v8-engine.js';

// One sandboxed host serves a session's programs, a fresh isolate each: every conformance case
// still holds, a catastrophic V8 error included (it retires the host).
describeEngineConformance({ engine: v8Engine, sandbox: bwrapSandbox, placement: 'session' });
