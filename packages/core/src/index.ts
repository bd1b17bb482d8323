/**
 * For applications: agents (`defineAgent`), tools (`defineTool`), runs and their stream events,
 * the runtime that holds engines, sandboxes and models (`createRuntime`), usage, and the errors
 * an application may catch. Other audiences have their own entry points: `@ghost/core/testing`
 * (scripted and mock models for tests), `@ghost/core/provider` (model provider authors),
 * `@ghost/core/sandbox` (sandbox backend authors), `@ghost/core/tool-calls` (packages that run
 * tool calls for an agent, such as code mode).
 *
 * @example
 * ```ts
 * import { defineAgent, defineTool } from '@ghost/core';
 * ```
 *
 * @packageDocumentation
 */

export {
  type Agent,
  type AgentDefinition,
  type AgentInput,
  type AgentLimits,
  type AgentTool,
  type AskOptions,
  type AskOptionsWithOutput,
  defaultAgentLimits,
  defineAgent,
  type OutputOf,
} from './agent.js';
export type { ApprovalMode, ResumeOptions } from './agent-resume.js';
export type { AgentToolOptions } from './agent-tool.js';
export { defineModelProvider } from './define-model-provider.js';
export {
  AgentInterjectionError,
  AgentLimitError,
  ApprovalError,
  type ApprovalErrorCode,
  CancelledError,
  CleanupError,
  type CleanupErrorInit,
  ConfigurationError,
  type ConfigurationErrorCode,
  type ConfigurationErrorFacts,
  type ConfigurationErrorInit,
  type CoreErrorCode,
  DeadlineExceededError,
  GhostError,
  type GhostErrorCode,
  type GhostErrorInit,
  type GhostErrorOptions,
  ModelError,
  type ModelErrorCode,
  markErrorClass,
  PausedRunError,
  type PausedRunErrorCode,
  type PluginErrorCode,
  type RunErrorCode,
  RunResumeConflictError,
  RunStateError,
  SandboxUnavailableError,
  type SandboxUnavailableErrorInit,
  ToolError,
  type ToolErrorCode,
  ToolResultInvalidError,
  ToolSourceError,
  type ToolSourceErrorInit,
  ToolTimeoutError,
} from './errors.js';
export type { JsonObject, JsonValue } from './json.js';
export { type MemorySessionStoreOptions, memorySessionStore } from './memory-session-store.js';
export type {
  Artifact,
  JsonSchema,
  ModelAssistantMessage,
  ModelFilePart,
  ModelFinishReason,
  ModelImagePart,
  ModelMessage,
  ModelOutputFormat,
  ModelReasoning,
  ModelRequest,
  ModelRetryNotice,
  ModelSettings,
  ModelStreamLimits,
  ModelStreamOptions,
  ModelStreamPart,
  ModelTextPart,
  ModelToolCall,
  ModelToolDefinition,
  ModelToolMessage,
  ModelUserContentPart,
  ModelUserMessage,
  ModelV1,
  ProviderOptions,
} from './model.js';
export {
  ModelAuthenticationError,
  ModelContentFilterError,
  ModelContextOverflowError,
  type ModelErrorFacts,
  type ModelErrorInit,
  ModelRateLimitError,
  ModelResponseError,
  ModelUnavailableError,
  OutputValidationError,
} from './model-errors.js';
export type { EnginePlugin, ModelProviderV1, Plugin, PluginKind, PluginsByKind } from './plugin.js';
export type { PluginDeclaration } from './plugin-declaration.js';
export {
  PluginAlreadyRegisteredError,
  type PluginErrorFacts,
  type PluginErrorInit,
  PluginInvalidError,
  PluginLoadError,
  PluginNotFoundError,
  PluginNotInstalledError,
  PluginVersionError,
} from './plugin-errors.js';
export { type ImportModule, Registry, type RegistryOptions } from './registry.js';
export type { ResumeDecision } from './resume-paused-calls.js';
export { type Closeable, type Closer, Run, type RunResult, type RunStep, type RunStream } from './run.js';
export { type Invocation, RunContext, type RunContextInit } from './run-context.js';
export type { RunOutcome } from './run-outcome.js';
export {
  defaultSessionLockTimeoutMs,
  type RunSession,
  type SessionEntry,
  type SessionOptions,
} from './run-session.js';
export {
  configure,
  createRuntime,
  defaultRuntime,
  type Runtime,
  type RuntimeOptions,
  type RuntimeResource,
} from './runtime.js';
// Applications pass backends to `createRuntime`; writing one takes `@ghost/core/sandbox`.
export type { SandboxBackendV1 } from './sandbox.js';
export {
  SessionAccessError,
  SessionBusyError,
  type SessionBusyErrorInit,
  SessionConflictError,
  type SessionConflictErrorInit,
  type SessionErrorCode,
  SessionLimitError,
  type SessionLimitErrorInit,
  type SessionLimitName,
  SessionStoreError,
  type SessionStoreErrorInit,
} from './session-errors.js';
export {
  defaultSessionLimits,
  type SessionLimits,
  type SessionListRequest,
  type SessionPage,
  type SessionStoreV1,
  type SessionSummary,
  type SessionTurnOutcome,
} from './session-store.js';
export { currentSpecificationVersions } from './specification-version.js';
export {
  type AgentStreamSource,
  type ApprovalDecision,
  type ApprovalRequestedData,
  type ApprovalResolvedData,
  type AssemblyStepEventData,
  type ErrorSummary,
  type NestedStreamEvent,
  type StreamEvent,
  type StreamEventDataMap,
  type StreamEventOf,
  type StreamEventType,
  type SubagentEventData,
  type SubagentPhase,
  type TerminalStreamEventType,
  type ToolEventData,
  terminalEventTypes,
} from './stream-event.js';
export type { SubagentDefinition } from './subagent-definition.js';
export type {
  RunTelemetry,
  TelemetryEventDetail,
  TelemetryRunStart,
  TelemetryScope,
  TelemetryV1,
} from './telemetry.js';
export {
  defaultToolTimeoutMs,
  defineTool,
  type SchemaProblem,
  type Tool,
  type ToolApprovalContext,
  type ToolAuthorization,
  type ToolAuthorizationContext,
  type ToolContext,
  type ToolDefinition,
  type ToolNeedsApproval,
  ToolResult,
} from './tool.js';
export type { PendingApproval } from './tool-approval.js';
export {
  isToolSource,
  type OpenedToolSource,
  type ToolSource,
  type ToolSourceOpenContext,
} from './tool-source.js';
export { Usage, type UsageInit } from './usage.js';
// Plugin packages (code mode's `defineEngine`) check a plugin's shape with the registry's own rules.
export { type PluginOrigin, validatePlugin } from './validate-plugin.js';
export { Workspace, type WorkspaceOptions } from './workspace.js';
export { WorkspaceClosedError } from './workspace-closed-error.js';
