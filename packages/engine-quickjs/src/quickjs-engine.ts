import { fileURLToPath } from 'node:url';
import { defineHostEngine, type EngineV1, packageRuntimePaths } from '@ghost/code-mode/engine';
import { hostScript, hostV8Options } from './host-start.js';
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
  // Found when the first host starts: walking the dependencies on disk at import took ~10 ms
  // (docs/decisions/2026-12-07-round-trip-and-imports.md).
  runtimePaths: () => packageRuntimePaths(packageRoot),
  placements: ['process', 'session', 'thread'],
  // The runtime's memory limit and the heap-size poll stop a guest past limits.memoryBytes.
  capabilities: ['guest-memory-limit'],
  instructions: quickjsInstructions,
  // Hosts start from the bundled script: with QuickJS on Liftoff only, that is faster than from a
  // Node startup snapshot (docs/decisions/2026-12-05-host-start-without-snapshot.md).
  host: { script: hostScript, threadWorker, nodeOptions: hostV8Options },
});
