/**
 * For authors of plugins and integrations: code-mode engines, telemetry (`TelemetryV1`), tool
 * sources, and packages that wrap a run (a web UI, traces, MCP). The plugin contracts and the
 * registry that loads them, the run's context and workspace, the stream events a relay passes on,
 * and the building blocks of a package's own errors (`markErrorClass`, `GhostErrorInit`).
 * Applications do not need this entry point: they import from `@ghost/core`. Model providers have
 * `@ghost/core/provider`, sandbox backends `@ghost/core/sandbox`, session stores
 * `@ghost/core/session-store`.
 *
 * @example
 * ```ts
 * import { GhostError } from '@ghost/core';
 * import { markErrorClass } from '@ghost/core/plugin';
 *
 * export class WidgetBrokenError extends GhostError {
 *   static {
 *     markErrorClass(WidgetBrokenError, 'WidgetBrokenError');
 *   }
 *   declare readonly code: 'WIDGET_BROKEN';
 *   constructor(message: string) {
 *     super(message, { code: 'WIDGET_BROKEN' });
 *   }
 * }
 * ```
 *
 * @packageDocumentation
 */

export { defaultAgentLimits } from '../agent.js';
export {
  type ApprovalErrorCode,
  CleanupError,
  type CleanupErrorInit,
  type ConfigurationErrorFacts,
  type ConfigurationErrorInit,
  type GhostErrorInit,
  type GhostErrorOptions,
  markErrorClass,
  type PausedRunErrorCode,
  type SandboxUnavailableErrorInit,
  ToolResultInvalidError,
  ToolSourceError,
  type ToolSourceErrorInit,
} from '../errors.js';
export type { EnginePlugin, Plugin, PluginKind, PluginsByKind } from '../plugin.js';
export {
  PluginAlreadyRegisteredError,
  type PluginErrorFacts,
  type PluginErrorInit,
  PluginInvalidError,
  PluginLoadError,
  PluginNotFoundError,
  PluginNotInstalledError,
  PluginVersionError,
} from '../plugin-errors.js';
export { type ImportModule, Registry, type RegistryOptions } from '../registry.js';
export type { Closeable, Closer } from '../run.js';
export { type Invocation, RunContext, type RunContextInit } from '../run-context.js';
export type { RuntimeResource } from '../runtime.js';
export { currentSpecificationVersions } from '../specification-version.js';
export {
  type AgentStreamSource,
  type NestedStreamEvent,
  type SubagentPhase,
  type TerminalStreamEventType,
  terminalEventTypes,
} from '../stream-event.js';
export type {
  RunTelemetry,
  TelemetryEventDetail,
  TelemetryRunStart,
  TelemetryScope,
  TelemetryV1,
} from '../telemetry.js';
export { defaultToolTimeoutMs, type SchemaProblem } from '../tool.js';
export { isToolSource, type OpenedToolSource, type ToolSourceOpenContext } from '../tool-source.js';
// Plugin packages (code mode's `defineEngine`) check a plugin's shape with the registry's own rules.
export { type PluginOrigin, validatePlugin } from '../validate-plugin.js';
export { Workspace, type WorkspaceOptions } from '../workspace.js';
export { WorkspaceClosedError } from '../workspace-closed-error.js';
