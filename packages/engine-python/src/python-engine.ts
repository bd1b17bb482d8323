import { fileURLToPath } from 'node:url';
import {
  defineHostEngine,
  type EngineV1,
  packageRuntimePaths,
  pythonInstructions,
} from '@ghost/code-mode/engine';
import { sharedPythonSnapshot } from './python-snapshot.js';

const packageRoot = fileURLToPath(new URL('..', import.meta.url));

/** The least `limits.memoryBytes` Python programs run with: 32 MiB. */
export const pythonMinimumMemoryBytes = 32 * 1024 * 1024;

/**
 * The Python engine: each program runs in a fresh CPython interpreter (Pyodide, WebAssembly)
 * inside a fresh host process started through the sandbox, with one host started (and its
 * interpreter loaded) ahead. Programs are Python: `await tools.lookup(query="...")`, `print`,
 * the last expression's value as the result. See the package README.
 */
export const pythonEngine: EngineV1 = defineHostEngine({
  name: 'python',
  language: 'python',
  // Node's permission model lets the host read exactly these: its code and its dependencies'
  // (Pyodide's wasm and standard library among them).
  runtimePaths: () => packageRuntimePaths(packageRoot),
  // One interpreter per program: a host's interpreter keeps modules, files and builtins a
  // program changed, so no host serves a second program (docs/decisions/2026-12-07-python-engine.md).
  placements: ['process'],
  // The host stops a program whose WebAssembly memory grew past limits.memoryBytes, but only at
  // its next check, after the growth: the sandbox's memory limit is the bound.
  capabilities: [],
  // Below this the interpreter and its heap do not fit with room for a program: a Pyodide host
  // is about 200 MiB resident (docs/decisions/2026-12-07-python-engine.md).
  minimumMemoryBytes: pythonMinimumMemoryBytes,
  instructions: (context) =>
    pythonInstructions(context, { interpreter: 'a fresh CPython interpreter (Pyodide, in WebAssembly)' }),
  host: {
    script: fileURLToPath(new URL('../host/python-host.mjs', import.meta.url)),
    // No eval or new Function in the host: a program that reaches a JavaScript object through
    // Pyodide's foreign-function interface cannot turn its constructor into code.
    nodeOptions: ['--disallow-code-generation-from-strings'],
  },
  // Hosts load Pyodide from a memory snapshot made once per machine, which they may read.
  prepare: async () => {
    const snapshot = await sharedPythonSnapshot();
    return snapshot === undefined ? undefined : { hostArguments: [snapshot], readPaths: [snapshot] };
  },
});
