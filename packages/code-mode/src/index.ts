/**
 * Code mode for Ghost agents: the model writes one JavaScript program that calls your tools, and
 * the program runs in a fresh engine inside a sandbox while every tool call comes back through
 * the agent's own pipeline. This entry is for applications: `codeMode()` and its options and
 * limits, sessions opened without an agent, and the errors an application catches. Engine authors
 * have `@ghost/code-mode/engine` (the parent side) and `@ghost/code-mode/host` (inside the
 * sandbox); conformance suites are in `@ghost/code-mode/testing`.
 *
 * @example
 * ```ts
 * import { defineAgent } from '@ghost/core';
 * import { codeMode } from '@ghost/code-mode';
 *
 * const research = defineAgent({
 *   name: 'research',
 *   model,
 *   tools: [helpCenterLookup],
 *   codeMode: codeMode({ sandbox: 'unrestricted' }),
 * });
 * ```
 *
 * @packageDocumentation
 */

export { type CodeModeOptions, codeMode, resolveEngine } from './code-mode.js';
export type {
  CodeModePlacement,
  CodeModeSession,
  EngineV1,
  ObserveOptions,
  ProgramResult,
  ProgramStatus,
} from './engine.js';
export {
  CodeModeConfigurationError,
  type CodeModeConfigurationErrorCode,
  type CodeModeErrorCode,
  CodeModeHostError,
  CodeModeSourceTooLargeError,
  CodeModeStateError,
} from './errors.js';
export { type CodeModeLimits, defaultCodeModeLimits } from './limits.js';
export {
  type CodeModeSessionOptions,
  type OpenedCodeModeSession,
  openCodeModeSession,
} from './open-code-mode-session.js';
export type { SandboxChoice } from './parent/sandbox-factory.js';
