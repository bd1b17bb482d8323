import { fileURLToPath } from 'node:url';
import { defineHostEngine, type EngineV1, packageRuntimePaths } from '@ghost/code-mode/engine';
import { pythonInstructions } from './python-instructions.js';

const packageRoot = fileURLToPath(new URL('..', import.meta.url));

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
  runtimePaths: Object.freeze(packageRuntimePaths(packageRoot)),
  // One interpreter per program: a host's interpreter keeps modules, files and builtins a
  // program changed, so no host serves a second program (docs/decisions/2026-12-07-python-engine.md).
  placements: ['process'],
  // The host stops a program whose WebAssembly memory grew past limits.memoryBytes, but only at
  // its next check, after the growth: the sandbox's memory limit is the bound.
  capabilities: [],
  instructions: pythonInstructions,
  host: { script: fileURLToPath(new URL('../host/python-host.mjs', import.meta.url)) },
});
