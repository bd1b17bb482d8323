/**
 * Ghost's default code-mode engine: QuickJS compiled to WebAssembly. Installing this package is
 * enough: code mode resolves the engine name `'quickjs'` to it on first use.
 *
 * @example
 * ```ts
 * import { defineAgent } from '@ghost/core';
 * import { codeMode } from '@ghost/code-mode';
 *
 * const agent = defineAgent({ name: 'research', model, tools, codeMode: codeMode({ engine: 'quickjs', sandbox: 'unrestricted' }) });
 * ```
 *
 * @packageDocumentation
 */
import { quickjsEngine } from './quickjs-engine.js';

export { quickjsEngine } from './quickjs-engine.js';
export { quickjsInstructions } from './quickjs-instructions.js';

/** The plugin the registry loads for the name `'quickjs'`. */
export default quickjsEngine;
