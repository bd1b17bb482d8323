import { fileURLToPath } from 'node:url';
import { defineHostEngine, type EngineV1, packageRuntimePaths } from '@ghost/code-mode';
import { hostScript } from './host-start.js';
import { hostStartOptions } from './host-start-options.js';
import { quickjsInstructions } from './quickjs-instructions.js';

const packageRoot = fileURLToPath(new URL('..', import.meta.url));
const threadWorker = fileURLToPath(new URL('../dist/thread-worker.js', import.meta.url));

/**
 * The QuickJS engine: each program runs in a fresh QuickJS runtime (WebAssembly, no native code)
 * inside a fresh host process started through the sandbox, with one host started ahead. With
 * `placement: 'session'` one sandboxed host serves the session's programs while they complete.
 * With `sandbox: 'unrestricted'` it also runs in worker threads (`placement: 'thread'`).
 */
export const quickjsEngine: EngineV1 = defineHostEngine({
  name: 'quickjs',
  language: 'javascript',
  // Node's permission model lets the host read exactly these: its code and its dependencies'.
  runtimePaths: Object.freeze(packageRuntimePaths(packageRoot)),
  placements: ['process', 'session', 'thread'],
  instructions: quickjsInstructions,
  host: { script: hostScript, threadWorker },
  // Looked up per session, so a snapshot built while this process runs is used from then on; a
  // worker thread starts no Node, so it needs none.
  prepare: (context) => (context.placement === 'thread' ? undefined : hostStartOptions()),
});
