import { fileURLToPath } from 'node:url';
import { defineEngine, type EngineV1, openHostSession, packageRuntimePaths } from '@ghost/code-mode';
import { quickjsInstructions } from './quickjs-instructions.js';

const packageRoot = fileURLToPath(new URL('..', import.meta.url));
// The host always runs from the build (a plain `node` cannot run TypeScript sources).
const hostScript = fileURLToPath(new URL('../dist/host.cjs', import.meta.url));
const threadScript = fileURLToPath(new URL('../dist/thread-worker.js', import.meta.url));

// Node's permission model lets the host read exactly these: its code and its dependencies'.
const runtimePaths = Object.freeze(packageRuntimePaths(packageRoot));

/**
 * V8 starts wasm on its baseline compiler and re-compiles hot functions with its optimising one.
 * A host serves one program, and at the default threshold V8 starts optimising QuickJS's
 * interpreter while the host is still starting, which cost several times the CPU of the rest of
 * the start. With this threshold only a program that computes for a long while gets optimised.
 */
const processNodeOptions = Object.freeze(['--wasm-tiering-budget=2000000000']);

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
  open: (context) =>
    openHostSession(context, {
      engine: 'quickjs',
      hostScript,
      threadScript,
      runtimePaths,
      nodeOptions: processNodeOptions,
    }),
});
