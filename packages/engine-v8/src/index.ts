/**
 * A Ghost code-mode engine on V8 isolates (`isolated-vm`, a peer dependency): full modern
 * JavaScript at V8's speed, one fresh isolate per program in a fresh sandboxed host process.
 * Installing this package and isolated-vm is enough: code mode resolves the engine name `'v8'`
 * to it on first use.
 *
 * @example
 * ```ts
 * import { defineAgent } from '@ghost/core';
 * import { codeMode } from '@ghost/code-mode';
 *
 * const agent = defineAgent({ name: 'research', model, tools, codeMode: codeMode({ engine: 'v8' }) });
 * ```
 *
 * @packageDocumentation
 */
import { v8Engine } from './v8-engine.js';

export { IsolatedVmUnavailableError } from './isolated-vm-check.js';
export { v8Engine } from './v8-engine.js';

/** The plugin the registry loads for the name `'v8'`. */
export default v8Engine;
