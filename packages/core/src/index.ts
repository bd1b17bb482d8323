/**
 * For applications: agents (`defineAgent`), tools (`defineTool`), runs and the stream events an
 * application reads, approvals and resuming, conversation sessions, the runtime that holds
 * engines, sandboxes and models (`createRuntime`), usage, and the errors an application catches.
 * Other audiences have their own entry points: `@ghost/core/testing` (scripted and mock models for
 * tests), `@ghost/core/provider` (model provider authors), `@ghost/core/plugin` (plugin,
 * telemetry, tool source and integration authors), `@ghost/core/session-store` (session store
 * authors), `@ghost/core/sandbox` (sandbox backend authors), `@ghost/core/assembly` (kinds of
 * assembly), `@ghost/core/tool-calls` (packages that run tool calls for an agent, such as code
 * mode). See docs/decisions/2026-12-06-entry-points-by-audience.md.
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
  defineAgent,
  type OutputOf,
} from './agent.js';
export type { ApprovalMode, ResumeOptions } from './agent-resume.js';
export type { AgentToolOptions } from './agent-tool.js';
// The errors an application catches; the rest of each family is on the entry of its audience.
export {
  AgentInterjectionError,
  AgentLimitError,
  ApprovalError,
  CancelledError,
  ConfigurationError,
  type CoreErrorCode,
  DeadlineExceededError,
  GhostError,
  ModelError,
  PausedRunError,
  RunResumeConflictError,
  RunStateError,
  SandboxUnavailableError,
  ToolError,
  ToolTimeoutError,
} from './errors.js';
export type { JsonObject, JsonValue } from './json.js';
export { type MemorySessionStoreOptions, memorySessionStore } from './memory-session-store.js';
// An application passes a model and input messages; writing a model takes `@ghost/core/provider`.
export type { Artifact, ModelMessage, ModelV1 } from './model.js';
export { ModelRateLimitError, OutputValidationError } from './model-errors.js';
export type { ResumeDecision } from './resume-paused-calls.js';
export { Run, type RunResult, type RunStream } from './run.js';
export type { RunOutcome } from './run-outcome.js';
export type { RunSession, SessionEntry, SessionOptions } from './run-session.js';
export {
  configure,
  createRuntime,
  defaultRuntime,
  type Runtime,
  type RuntimeOptions,
} from './runtime.js';
// Applications pass backends to `createRuntime`; writing one takes `@ghost/core/sandbox`.
export type { SandboxBackendV1 } from './sandbox.js';
export { SessionBusyError } from './session-errors.js';
// Applications pass stores to `createRuntime`; writing one takes `@ghost/core/session-store`.
export type { SessionStoreV1 } from './session-store.js';
export type {
  ApprovalDecision,
  ApprovalRequestedData,
  ApprovalResolvedData,
  ErrorSummary,
  StreamEvent,
  StreamEventDataMap,
  StreamEventOf,
  StreamEventType,
  SubagentEventData,
  ToolEventData,
} from './stream-event.js';
export type { SubagentDefinition } from './subagent-definition.js';
export {
  defineTool,
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
// Applications pass tool sources (an MCP server's tools) to agents; writing one takes `@ghost/core/plugin`.
export type { ToolSource } from './tool-source.js';
export { Usage } from './usage.js';
