import { ConcurrencyLimit } from './concurrency-limit.js';
import { AgentLimitError } from './errors.js';
import { loadSchemaCompiler } from './json-schema-validator.js';
import type {
  ModelMessage,
  ModelRequest,
  ModelSettings,
  ModelStreamLimits,
  ModelToolCall,
  ModelV1,
  ProviderOptions,
} from './model.js';
import { OutputValidationError } from './model-errors.js';
import { streamTurn } from './model-turn.js';
import type { PausedCall } from './paused-run.js';
import { continuePausedCalls, type ResumePlan } from './resume-paused-calls.js';
import type { PendingInterjection, RunExecution, RunResult } from './run.js';
import { repairRequest, type StructuredOutput } from './structured-output.js';
import type { Tool } from './tool.js';
import type { ApprovalGate, SuspendingApprovalGate } from './tool-approval.js';
import {
  runToolCall,
  type ToolCallBudget,
  type ToolCallEnvironment,
  type ToolCallOutcome,
  type ToolCallRequest,
  toolResultMessage,
} from './tool-call-runner.js';
import type { ToolLock } from './tool-lock.js';

/**
 * The limits of one agent's runs; those it shares with {@link ModelStreamLimits} bound each model
 * answer (see there for what each counts and its default).
 */
export interface AgentLimits extends ModelStreamLimits {
  /** Model turns per run. Default 100. */
  readonly maxTurns: number;
  /**
   * Tool calls per invocation of the agent, direct and brokered, counting those of the agents it
   * runs nested (each of which also keeps its own `maxToolCalls`): so the run's own agent's limit
   * bounds the tool calls of the whole run. Default 1,000.
   */
  readonly maxToolCalls: number;
  /** Tool calls of one model turn that run at the same time. Default 8. */
  readonly maxParallelToolCalls: number;
  /**
   * How many levels of agents may run nested below this one (an agent it runs as a tool is one
   * level, an agent that one runs is two). Every agent above a nested one applies its own
   * `maxDepth` too, so the tightest wins. Past it, the tool call that would run the agent fails
   * with an `AgentLimitError` the model reads. Default 8.
   */
  readonly maxDepth: number;
  /**
   * Subagents (`defineAgent({ subagents })`) working at the same time, per invocation of this
   * agent. Past it, `spawn_subagent` and a message to an idle subagent fail with a tool error
   * telling the model to wait for one first. Default 8.
   */
  readonly maxLiveSubagents: number;
  /** Subagents (distinct `task_name`s) one invocation of this agent may spawn. Default 20. */
  readonly maxSubagents: number;
  /**
   * Messages waiting for one subagent's next turns (`send_message_to_subagent` while it works);
   * past it the message is refused with a tool error. Default 8.
   */
  readonly maxQueuedSubagentMessages: number;
  /**
   * How long one `wait_for_subagents` call waits before it answers `still_working`, in
   * milliseconds. Default 30,000.
   */
  readonly subagentWaitMs: number;
  /**
   * How long a tool call that needs a person's approval (`defineTool({ needsApproval })`) waits
   * for `run.approve` / `run.reject`, in milliseconds; after it the call is rejected as
   * `timed_out` and the model reads that no one approved it. The run's cancellation and deadline
   * end the wait sooner. The wait does not count against the tool's `timeoutMs`. Default 600,000
   * (10 minutes).
   */
  readonly approvalTimeoutMs: number;
}

/** What the loop needs of the agent. */
export interface AgentLoopInput {
  readonly agentName: string;
  /** Read at every turn (it may be a getter), so it can change during the run. */
  readonly instructions: string;
  readonly model: ModelV1;
  /** The tools the model sees and calls directly; read at every turn, like `instructions`. */
  readonly tools: ReadonlyMap<string, Tool>;
  readonly limits: AgentLimits;
  /** The conversation so far, ending with what the model is asked now. */
  readonly messages: readonly ModelMessage[];
  /** When set, the final answer must be JSON matching this schema (one repair turn). */
  readonly output?: StructuredOutput;
  readonly settings?: ModelSettings;
  readonly providerOptions?: ProviderOptions;
  /** The run's tool-call budget, shared with code mode's brokered calls. */
  readonly budget: ToolCallBudget;
  /** The run's exclusive lock, shared with code mode's brokered calls. */
  readonly lock: ToolLock;
  /** Code mode's control tools among `tools`: uncounted, unlocked and out of the public stream. */
  readonly controlToolNames?: ReadonlySet<string>;
  /** Where calls that need approval wait, shared with code mode's brokered calls. */
  readonly approvals?: ApprovalGate;
  /**
   * With `approvals: 'suspend'`: the gate of the agent's own direct calls, which notes them for the
   * run's pause instead of waiting. The loop ends when it noted any.
   */
  readonly suspension?: SuspendingApprovalGate;
  /** With `agent.resume()`: the pause to continue before the first model turn. */
  readonly resume?: ResumePlan;
}

/** The limits of one answer, as the agent passes them to its model. */
function streamLimitsOf(limits: AgentLimits): ModelStreamLimits {
  return {
    maxToolCallsPerAnswer: limits.maxToolCallsPerAnswer,
    maxToolCallBytes: limits.maxToolCallBytes,
    maxAnswerBytes: limits.maxAnswerBytes,
    maxStreamEventBytes: limits.maxStreamEventBytes,
    streamIdleTimeoutMs: limits.streamIdleTimeoutMs,
  };
}

/**
 * The deepest arrays and objects may nest in a tool call's arguments. Deeper values would overflow
 * the stack of the recursive code every call passes through (schema validation, event freezing,
 * telemetry); code mode bounds its program values the same way.
 */
const maxArgumentsDepth = 256;

/**
 * Whether JSON text nests arrays and objects deeper than `limit`: one pass over the text, without
 * recursion, before anything is parsed. Brackets inside strings do not count.
 */
function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let isInString = false;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (isInString) {
      if (code === 0x5c)
        index += 1; // a backslash: the next character is escaped
      else if (code === 0x22) isInString = false;
    } else if (code === 0x22) {
      isInString = true;
    } else if (code === 0x5b || code === 0x7b) {
      depth += 1;
      if (depth > limit) return true;
    } else if (code === 0x5d || code === 0x7d) {
      depth -= 1;
    }
  }
  return false;
}

function parseArguments(call: ModelToolCall): ToolCallRequest {
  const base = { toolCallId: call.id, toolName: call.name };
  if (call.arguments.trim() === '') return { ...base, input: {} };
  // The model reads the reason and may send flatter arguments; the run goes on.
  if (nestsDeeperThan(call.arguments, maxArgumentsDepth)) {
    return {
      ...base,
      input: call.arguments,
      argumentsError: `arguments nest deeper than ${maxArgumentsDepth} levels of arrays and objects; send flatter arguments`,
    };
  }
  try {
    return { ...base, input: JSON.parse(call.arguments) as unknown };
  } catch (error) {
    return {
      ...base,
      input: call.arguments,
      argumentsError: `arguments are not valid JSON (${(error as Error).message})`,
    };
  }
}

/**
 * The agent's tool loop (its caller announces the invocation: `invocation_start` before,
 * `invocation_stop` or `invocation_error` after): ask the model, run the tools it calls (concurrently, bounded; exclusive
 * tools alone), give it the results, and repeat until it answers without calling a tool.
 */
export async function runAgentLoop(loop: AgentLoopInput, execution: RunExecution): Promise<RunResult> {
  const { emit, runContext } = execution;
  const messages: ModelMessage[] = [...loop.messages];
  execution.recordTranscript(messages);
  const controlToolNames = loop.controlToolNames ?? new Set<string>();
  const streamLimits = streamLimitsOf(loop.limits);
  const { output } = loop;
  let delivered: PendingInterjection[] = [];
  let turn = loop.resume?.paused.turns ?? 0;
  let text = '';
  let outputValue: unknown;
  let isRepairing = false;
  const suspend = (calls: readonly PausedCall[]): RunResult => {
    execution.suspend({ calls, turns: turn, toolCalls: loop.budget.used });
    return { text: '', turns: turn, toolCalls: loop.budget.used, messages };
  };
  if (loop.resume !== undefined) {
    const waiting = await continuePausedCalls({
      agentName: loop.agentName,
      plan: loop.resume,
      messages,
      tools: loop.tools,
      environment: toolCallEnvironmentOf(loop, execution, loop.tools),
      maxParallel: loop.limits.maxParallelToolCalls,
      execution,
    });
    if (waiting.length > 0) return suspend(waiting);
  }
  try {
    for (;;) {
      delivered = execution.takeInterjections();
      for (const interjection of delivered) messages.push({ role: 'user', content: interjection.message });
      if (turn >= loop.limits.maxTurns) {
        throw new AgentLimitError(
          `Agent '${loop.agentName}' used all ${loop.limits.maxTurns} turns without a final answer; raise limits.maxTurns or narrow the task.`,
          { maxTurns: loop.limits.maxTurns },
        );
      }
      turn += 1;
      runContext.throwIfStopped();
      // Read again at every turn: a tool source may have changed the tools since the last one.
      const tools = loop.tools;
      const environment = toolCallEnvironmentOf(loop, execution, tools);
      const request = modelRequestOf(loop, messages, tools);
      emit('model_start', { turn, provider: loop.model.provider, modelId: loop.model.modelId }, { request });
      const turnNumber = turn;
      const result = await execution.inScope({ kind: 'model', turn: turnNumber }, () =>
        streamTurn(request, loop.model, turnNumber, execution, controlToolNames, streamLimits),
      );
      text = result.text;
      for (const interjection of delivered) interjection.resolve(result.text);
      delivered = [];
      const reasoning = result.reasoning.length > 0 ? { reasoning: result.reasoning } : {};
      if (result.toolCalls.length === 0) {
        messages.push({ role: 'assistant', content: result.text, ...reasoning });
        if (execution.hasPendingInterjections) continue;
        if (output === undefined) break;
        const answer = await checkFinalAnswer(loop.agentName, output, result.text, isRepairing);
        if (answer.isValid) {
          outputValue = answer.value;
          break;
        }
        // One repair turn: the model sees what was wrong and answers again.
        isRepairing = true;
        messages.push({ role: 'user', content: repairRequest(answer.problems) });
        continue;
      }
      messages.push({ role: 'assistant', content: result.text, toolCalls: result.toolCalls, ...reasoning });
      const suspended = await runToolCallStep(loop, result.toolCalls, environment, messages);
      if (suspended.length > 0) return suspend(suspended);
    }
  } catch (error) {
    for (const interjection of delivered) interjection.reject(error);
    throw error;
  }
  return {
    text,
    turns: turn,
    toolCalls: loop.budget.used,
    messages,
    ...(output !== undefined ? { output: outputValue } : {}),
  };
}

/** What the loop's direct tool calls run with, over the tools the model sees this turn. */
function toolCallEnvironmentOf(
  loop: AgentLoopInput,
  execution: RunExecution,
  tools: ReadonlyMap<string, Tool>,
): ToolCallEnvironment {
  return {
    runContext: execution.runContext,
    emit: execution.emit,
    budget: loop.budget,
    lock: loop.lock,
    tools,
    controlToolNames: loop.controlToolNames ?? new Set<string>(),
    inScope: execution.inScope,
    ...(loop.approvals === undefined ? {} : { approvals: loop.approvals }),
  };
}

/** The request of one model turn: the conversation so far and the tools as the model sees them. */
function modelRequestOf(
  loop: AgentLoopInput,
  messages: readonly ModelMessage[],
  tools: ReadonlyMap<string, Tool>,
): ModelRequest {
  const { output } = loop;
  return {
    instructions: loop.instructions,
    messages: [...messages],
    tools: [...tools.values()].map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputJsonSchema,
    })),
    ...(output ? { output: output.format } : {}),
    ...(loop.settings ? { settings: loop.settings } : {}),
    ...(loop.providerOptions ? { providerOptions: loop.providerOptions } : {}),
  };
}

/**
 * A final answer checked against the output schema: its value, or the problems to send back for
 * the one repair turn. A mismatch after the repair turn throws `OutputValidationError`.
 */
async function checkFinalAnswer(
  agentName: string,
  output: StructuredOutput,
  text: string,
  isRepairing: boolean,
): Promise<
  | { readonly isValid: true; readonly value: unknown }
  | { readonly isValid: false; readonly problems: readonly string[] }
> {
  await loadSchemaCompiler();
  const parsed = output.parse(text);
  if (parsed.ok) return { isValid: true, value: parsed.value };
  if (isRepairing) {
    throw new OutputValidationError(
      `Agent '${agentName}''s answer did not match its output schema, even after a repair turn: ${parsed.problems.slice(0, 5).join('; ')}.`,
      { text, problems: parsed.problems },
    );
  }
  return { isValid: false, problems: parsed.problems };
}

/**
 * Runs the tool calls of one answer and adds their results to the conversation; returns the calls
 * suspended for approval, whose results wait for the run's resume.
 */
async function runToolCallStep(
  loop: AgentLoopInput,
  toolCalls: readonly ModelToolCall[],
  environment: ToolCallEnvironment,
  messages: ModelMessage[],
): Promise<readonly PausedCall[]> {
  const outcomes = await runToolCalls(toolCalls, environment, loop.limits.maxParallelToolCalls);
  const suspended = loop.suspension?.take() ?? [];
  const waiting = new Set(suspended.map((call) => call.toolCallId));
  for (const outcome of outcomes) {
    if (!waiting.has(outcome.toolCallId)) messages.push(toolResultMessage(outcome));
  }
  return suspended;
}

function runToolCalls(
  calls: readonly ModelToolCall[],
  environment: ToolCallEnvironment,
  maxParallel: number,
): Promise<ToolCallOutcome[]> {
  const limit = new ConcurrencyLimit(maxParallel);
  return Promise.all(calls.map((call) => limit.run(() => runToolCall(parseArguments(call), environment))));
}
