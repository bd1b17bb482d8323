/**
 * Code mode for Ghost agents: the model writes one JavaScript program that calls your tools, and
 * the program runs in a fresh engine inside a sandbox while every tool call comes back through
 * the agent's own pipeline.
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

export { type CodeModeOptions, codeMode, defaultObservationWindowMs, resolveEngine } from './code-mode.js';
export { controlToolNames, createControlTools, type ProgramEvents } from './control-tools.js';
export {
  defineHostEngine,
  type HostEngineDefinition,
  type HostEngineHost,
  type HostSessionStart,
} from './define-host-engine.js';
export {
  type CodeModePlacement,
  type CodeModeSession,
  defineEngine,
  type EngineInstructionsContext,
  type EngineOpenContext,
  type EngineV1,
  isEngineV1,
  type ObserveOptions,
  type ProgramResult,
  type ProgramStatus,
} from './engine.js';
export { type EngineCapability, engineCapabilities } from './engine-capability.js';
export {
  CodeModeConfigurationError,
  type CodeModeConfigurationErrorCode,
  type CodeModeConfigurationErrorInit,
  type CodeModeErrorCode,
  CodeModeHostError,
  CodeModeSourceTooLargeError,
  CodeModeStateError,
} from './errors.js';
export { type GuestGlobal, type GuestToolsMethod, guestGlobals, guestToolsMethods } from './guest-api.js';
export { type JavaScriptInstructionsOptions, javascriptInstructions } from './javascript-instructions.js';
export { type CodeModeLimits, defaultCodeModeLimits } from './limits.js';
export {
  type CodeModeSessionOptions,
  type OpenedCodeModeSession,
  openCodeModeSession,
} from './open-code-mode-session.js';
export { type PackageRuntimePathsOptions, packageRuntimePaths } from './parent/runtime-paths.js';
export {
  createSandboxFactory,
  type SandboxChoice,
  type SandboxedCommand,
  type SandboxFactory,
  type SandboxFactoryOptions,
} from './parent/sandbox-factory.js';
export type { GuestToolCall, ToolCallResult } from './shared/protocol.js';
export {
  type BrokerCallTool,
  type MeasuredToolCallResult,
  type ProgramToolCalls,
  ToolBroker,
} from './tool-broker.js';
export {
  type CatalogTool,
  type CatalogToolJson,
  reservedIdentifiers,
  ToolCatalog,
  type ToolCatalogOptions,
  toIdentifier,
} from './tool-catalog.js';
