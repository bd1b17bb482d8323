export {
  type Agent,
  type AgentDefinition,
  type AgentInput,
  type AgentLimits,
  type AskOptions,
  type AskOptionsWithOutput,
  defaultAgentLimits,
  defineAgent,
  type OutputOf,
} from './agent.js';
export type {
  AgentCodeMode,
  AgentCodeModeRun,
  AgentCodeModeStart,
  BrokeredToolCall,
  EmitProgramEvent,
  PreparedAgentCodeMode,
} from './agent-code-mode.js';
export {
  AgentInterjectionError,
  AgentLimitError,
  CancelledError,
  CleanupError,
  ConfigurationError,
  DeadlineExceededError,
  GhostError,
  type GhostErrorOptions,
  ModelError,
  RunStateError,
  SandboxUnavailableError,
  ToolError,
  ToolResultInvalidError,
  ToolSourceError,
  ToolTimeoutError,
} from './errors.js';
export type { JsonObject, JsonValue } from './json.js';
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
  ModelRateLimitError,
  ModelResponseError,
  ModelUnavailableError,
  OutputValidationError,
} from './model-errors.js';
export { type Closeable, type Closer, Run, type RunResult, type RunStream } from './run.js';
export { type Invocation, RunContext, type RunContextInit } from './run-context.js';
export type { RunOutcome } from './run-outcome.js';
// Runtime, registry, workspace and sandbox contract:
export * from './runtime-exports.js';
export {
  type ErrorSummary,
  type StreamEvent,
  type StreamEventDataMap,
  type StreamEventOf,
  type StreamEventType,
  type TerminalStreamEventType,
  type ToolEventData,
  terminalEventTypes,
} from './stream-event.js';
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
  type ToolAuthorization,
  type ToolAuthorizationContext,
  type ToolContext,
  type ToolDefinition,
  ToolResult,
} from './tool.js';
export type { ToolCallOutcome } from './tool-call-runner.js';
export {
  isToolSource,
  type OpenedToolSource,
  type ToolSource,
  type ToolSourceOpenContext,
} from './tool-source.js';
export { Usage, type UsageInit } from './usage.js';
