/**
 * A code-mode engine for Python: CPython on Pyodide (WebAssembly) in a sandboxed host, one fresh
 * interpreter per program. Installing this package is enough: code mode resolves the engine name
 * `'python'` to it on first use.
 *
 * @example
 * ```ts
 * import { defineAgent } from '@ghost/core';
 * import { codeMode } from '@ghost/code-mode';
 *
 * const agent = defineAgent({ name: 'research', model, tools, codeMode: codeMode({ engine: 'python' }) });
 * ```
 *
 * @packageDocumentation
 */
import { pythonEngine } from './python-engine.js';

export { pythonEngine, pythonMinimumMemoryBytes } from './python-engine.js';
export { pythonToolName } from './python-identifier.js';
export { pythonInstructions } from './python-instructions.js';

/** The plugin the registry loads for the name `'python'`. */
export default pythonEngine;
