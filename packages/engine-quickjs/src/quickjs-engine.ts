import { fileURLToPath } from 'node:url';
import { defineEngine, type EngineV1, openHostSession, packageRuntimePaths } from '@ghost/code-mode';
import { hostScript } from './host-start.js';
import { hostStartOptions } from './host-start-options.js';
import { quickjsInstructions } from './quickjs-instructions.js';

const packageRoot = fileURLToPath(new URL('..', import.meta.url));
const threadScript = fileURLToPath(new URL('../dist/thread-worker.js', import.meta.url));

// Node's permission model lets the host read exactly these: its code and its dependencies'.
const runtimePaths = Object.freeze(packageRuntimePaths(packageRoot));

/**
 * The QuickJS engine: each program runs in a fresh QuickJS runtime (WebAssembly, no native code)
 * inside a fresh host process started through the sandbox, with one host started ahead. With
 * `placement: 'session'` one sandboxed host serves the session's programs while they complete.
 * With `sandbox: 'unrestricted'` it also runs in worker threads (`placement: 'thread'`).
 */
export const quickjsEngine: EngineV1 = defineEngine({
  name: 'quickjs',
  language: 'javascript',
  runtimePaths,
  placements: ['process', 'session', 'thread'],
  instructions: quickjsInstructions,
  open: (context) => {
    // Looked up per session, so a snapshot built while this process runs is used from then on.
    const start = context.placement === 'thread' ? undefined : hostStartOptions();
    return openHostSession(context, {
      engine: 'quickjs',
      hostScript,
      threadScript,
      runtimePaths: start === undefined ? runtimePaths : [...runtimePaths, ...start.readPaths],
      ...(start === undefined ? {} : { nodeOptions: start.nodeOptions }),
    });
  },
});
