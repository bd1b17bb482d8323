/**
 * For packages that extend how an agent runs its tools, such as `@ghost/code-mode`, and for
 * integrations that run tools outside an agent's loop: the hook through which code mode plugs
 * into an agent ({@link AgentCodeMode}), the tool-call pipeline every call goes through
 * ({@link runToolCall}: validation, authorization, budget, lock, events, timeouts), the shared
 * budget, the exclusive-tool lock, the bounded queue of concurrent calls, and {@link raceAbort}.
 * Applications do not need this entry point: they write `codeMode({...})` and `defineTool(...)`.
 *
 * @example
 * ```ts
 * import { ConcurrencyLimit, runToolCall, ToolCallBudget, ToolLock } from '@ghost/core/tool-calls';
 *
 * const environment = { runContext, emit, budget: new ToolCallBudget(100), lock: new ToolLock(), tools };
 * const limit = new ConcurrencyLimit(8);
 * const outcome = await limit.run(() => runToolCall({ toolCallId: 'call-1', toolName: 'lookup', input: { query: 'ghost' } }, environment));
 * ```
 *
 * @packageDocumentation
 */

export { raceAbort } from './abort-race.js';
export type {
  AgentCodeMode,
  AgentCodeModeRun,
  AgentCodeModeStart,
  BrokeredToolCall,
  EmitProgramEvent,
  PreparedAgentCodeMode,
} from './agent-code-mode.js';
export { ConcurrencyLimit } from './concurrency-limit.js';
export type { ApprovalAnswer, ApprovalCall, ApprovalGate } from './tool-approval.js';
export {
  type EmitEvent,
  type InScope,
  runToolCall,
  ToolCallBudget,
  type ToolCallBudgetOptions,
  type ToolCallEnvironment,
  type ToolCallOutcome,
  type ToolCallRequest,
} from './tool-call-runner.js';
export { ToolLock } from './tool-lock.js';
