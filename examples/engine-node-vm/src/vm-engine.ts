import { fileURLToPath } from 'node:url';
import {
  defineHostEngine,
  type EngineV1,
  javascriptInstructions,
  packageRuntimePaths,
} from '@ghost/code-mode/engine';

const packageRoot = fileURLToPath(new URL('..', import.meta.url));

/**
 * A minimal code-mode engine: each program runs in a fresh `node:vm` context inside a fresh host
 * process that code mode starts in the sandbox. `node:vm` is no security boundary; the sandbox
 * and Node's permission model around the host are, as for every host engine. It cannot bound a
 * guest's memory (the sandbox's memory limit does) and stops synchronous code only at cpuSeconds.
 */
export const vmEngine: EngineV1 = defineHostEngine({
  name: 'node-vm',
  language: 'javascript',
  // The host reads its own code and its dependencies' (code mode's host side), nothing else.
  runtimePaths: () => packageRuntimePaths(packageRoot),
  placements: ['process', 'session'],
  // node:vm cannot bound a guest's memory: only a sandbox with a memory limit does.
  capabilities: [],
  instructions: (context) => javascriptInstructions(context, { interpreter: 'a fresh node:vm context' }),
  host: { script: fileURLToPath(new URL('./vm-host.mjs', import.meta.url)) },
});
