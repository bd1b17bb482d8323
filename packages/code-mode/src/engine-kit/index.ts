/**
 * For authors of code-mode engines, the parent side: the engine contract (`EngineV1`) and the
 * two ways to make one (`defineHostEngine` for an engine whose programs run in a host process code
 * mode starts, `defineEngine` for one that manages its sessions itself), what an engine is given
 * (the tool catalog, the broker, the sandbox factory, the limits), the instructions helper, and
 * the guest API every engine gives programs. Also for packages that drive an engine themselves,
 * such as `@ghost/mcp-server`. What runs inside the sandbox is in `@ghost/code-mode/host`; the
 * conformance suites are in `@ghost/code-mode/testing`. Applications do not need this entry
 * point: they import from `@ghost/code-mode`. See docs/guides/custom-engine.md.
 *
 * @example
 * ```ts
 * import { fileURLToPath } from 'node:url';
 * import { defineHostEngine, javascriptInstructions, packageRuntimePaths } from '@ghost/code-mode/engine';
 *
 * const packageRoot = fileURLToPath(new URL('..', import.meta.url));
 *
 * export const tinyEngine = defineHostEngine({
 *   name: 'tiny',
 *   language: 'javascript',
 *   runtimePaths: () => packageRuntimePaths(packageRoot),
 *   placements: ['process', 'session'],
 *   capabilities: [],
 *   instructions: (context) => javascriptInstructions(context, { interpreter: 'a fresh context' }),
 *   host: { script: fileURLToPath(new URL('./host.js', import.meta.url)) },
 * });
 * ```
 *
 * @packageDocumentation
 */

export {
  defineHostEngine,
  type HostEngineDefinition,
  type HostEngineHost,
  type HostSessionStart,
} from '../define-host-engine.js';
export {
  type CodeModePlacement,
  type CodeModeSession,
  defineEngine,
  type EngineInstructionsContext,
  type EngineOpenContext,
  type EngineRuntimePaths,
  type EngineV1,
  type ObserveOptions,
  type ProgramResult,
  type ProgramStatus,
} from '../engine.js';
export { type EngineCapability, engineCapabilities } from '../engine-capability.js';
export type { CodeModeConfigurationErrorCode, CodeModeConfigurationErrorInit } from '../errors.js';
export {
  type GuestGlobal,
  type GuestToolsMethod,
  guestGlobals,
  guestToolsMethods,
  type PythonGuestGlobal,
} from '../guest-api.js';
export { type JavaScriptInstructionsOptions, javascriptInstructions } from '../javascript-instructions.js';
export type { CodeModeLimits } from '../limits.js';
export { type PackageRuntimePathsOptions, packageRuntimePaths } from '../parent/runtime-paths.js';
export {
  createSandboxFactory,
  type SandboxChoice,
  type SandboxedCommand,
  type SandboxFactory,
  type SandboxFactoryOptions,
} from '../parent/sandbox-factory.js';
export { pythonDeclarations, pythonToolName } from '../python-declarations.js';
export { type PythonInstructionsOptions, pythonInstructions } from '../python-instructions.js';
export type { GuestToolCall, ToolCallResult } from '../shared/protocol.js';
export {
  type BrokerCallTool,
  type MeasuredToolCallResult,
  ProgramToolCalls,
  ToolBroker,
} from '../tool-broker.js';
export {
  type CatalogTool,
  type CatalogToolJson,
  ToolCatalog,
  type ToolCatalogOptions,
} from '../tool-catalog.js';
