import { WaitWatchdog } from './abort-race.js';
import { ConcurrencyLimit } from './concurrency-limit.js';
import { AgentLimitError, GhostError, ModelError } from './errors.js';
import { loadSchemaCompiler } from './json-schema-validator.js';
import type {
  ModelMessage,
  ModelReasoning,
  ModelRequest,
  ModelSettings,
  ModelStreamLimits,
  ModelStreamPart,
  ModelToolCall,
  ModelV1,
  ProviderOptions,
} from './model.js';
import { modelStreamLimitError } from './model-error-mapping.js';
import { ModelContentFilterError, ModelResponseError, OutputValidationError } from './model-errors.js';
import { modelStreamIdleError } from './model-retry.js';
import type { PausedCall } from './paused-run.js';
import { continuePausedCalls, type ResumePlan } from './resume-paused-calls.js';
import type { PendingInterjection, RunExecution, RunResult } from './run.js';
import { stopReason } from './run-context.js';
import { repairRequest, type StructuredOutput } from './structured-output.js';
import type { Tool } from './tool.js';
import type { ApprovalGate, SuspendingApprovalGate } from './tool-approval.js';
import {
  type EmitEvent,
  runToolCall,
  summarizeError,
  type ToolCallBudget,
  type ToolCallEnvironment,
  type ToolCallOutcome,
  type ToolCallRequest,
  toolResultMessage,
} from './tool-call-runner.js';
import type { ToolLock } from './tool-lock.js';
import { Usage } from './usage.js';

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

interface TurnResult {
  readonly text: string;
  readonly toolCalls: readonly ModelToolCall[];
  readonly reasoning: readonly ModelReasoning[];
  readonly finishReason: string;
}

/**
 * How much longer than `streamIdleTimeoutMs` the agent waits for a part: a provider that retries
 * gives up a stalled attempt itself, and its `retry` part must reach the loop before the loop
 * gives up on the whole answer.
 */
const providerIdleGraceMs = 1_000;

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

function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

async function streamTurn(
  request: ModelRequest,
  model: ModelV1,
  turn: number,
  execution: RunExecution,
  hiddenToolNames: ReadonlySet<string>,
  limits: ModelStreamLimits,
): Promise<TurnResult> {
  const { signal } = execution;
  const hiddenIndexes = new Set<number>();
  // Control calls (code mode's exec/wait/stop) are bookkeeping: the public stream omits them,
  // telemetry keeps them.
  const emit: EmitEvent = (type, data) => {
    const index = (data as { index?: unknown }).index;
    const isHidden = type.startsWith('tool_call_') && typeof index === 'number' && hiddenIndexes.has(index);
    execution.emit(type, data, isHidden ? { hidden: true } : {});
  };
  const calls = new Map<
    number,
    { id: string; name: string; arguments: string; bytes: number; providerMetadata?: ProviderOptions }
  >();
  const reasoning: ModelReasoning[] = [];
  const describeModel = `Model ${model.provider}:${model.modelId}`;
  const tooLarge = (limit: 'maxToolCallsPerAnswer' | 'maxToolCallBytes' | 'maxAnswerBytes') =>
    modelStreamLimitError(model.provider, limit, limits[limit]);
  // Every byte of text, reasoning and arguments counts once toward maxAnswerBytes; a reasoning
  // block's text counts where its deltas did not carry it.
  let answerBytes = 0;
  let unendedReasoningBytes = 0;
  const count = (bytes: number) => {
    answerBytes += bytes;
    if (answerBytes > limits.maxAnswerBytes) throw tooLarge('maxAnswerBytes');
  };
  let text = '';
  let finish: Extract<ModelStreamPart, { type: 'finish' }> | undefined;
  let responseId: string | undefined;
  let responseModelId: string | undefined;
  let hasOutput = false;
  // The model's own signal: the run's, and the idle timeout's, which also stops its request.
  const watchdog = new WaitWatchdog(signal);
  const idleError = () => modelStreamIdleError(model.provider, limits.streamIdleTimeoutMs);
  let waitMs = limits.streamIdleTimeoutMs + providerIdleGraceMs;
  let iterator: AsyncIterator<ModelStreamPart> | undefined;
  try {
    iterator = model.stream(request, { signal: watchdog.signal, limits })[Symbol.asyncIterator]();
    for (;;) {
      watchdog.arm(waitMs, idleError);
      const step = await watchdog.race(iterator.next());
      watchdog.disarm();
      if (step.done) break;
      const part = step.value;
      waitMs = limits.streamIdleTimeoutMs + providerIdleGraceMs;
      if (finish !== undefined) {
        throw new ModelResponseError(
          `${describeModel} sent a '${part.type}' part after 'finish' on turn ${turn}.`,
        );
      }
      if (part.type !== 'retry') hasOutput = true;
      switch (part.type) {
        case 'retry':
          if (hasOutput) {
            throw new ModelResponseError(
              `${describeModel} retried its request on turn ${turn} after its answer had begun; a provider retries only before its first part.`,
            );
          }
          // The provider waits this long before its next attempt.
          waitMs += Math.max(0, part.delayMs);
          emit('model_retry', {
            turn,
            attempt: part.attempt,
            delayMs: part.delayMs,
            error: summarizeError(part.error),
          });
          break;
        case 'text-delta':
          count(utf8Bytes(part.text));
          text += part.text;
          execution.noteText(text);
          emit('text_delta', { text: part.text });
          break;
        case 'reasoning-delta': {
          const bytes = utf8Bytes(part.text);
          count(bytes);
          unendedReasoningBytes += bytes;
          emit('reasoning_delta', { text: part.text });
          break;
        }
        case 'reasoning-end': {
          const { signature = '', redactedData = '' } = part.reasoning;
          const textBytes = utf8Bytes(part.reasoning.text);
          count(
            Math.max(0, textBytes - unendedReasoningBytes) + utf8Bytes(signature) + utf8Bytes(redactedData),
          );
          unendedReasoningBytes = Math.max(0, unendedReasoningBytes - textBytes);
          reasoning.push(part.reasoning);
          break;
        }
        case 'tool-call-start':
          if (!calls.has(part.index) && calls.size >= limits.maxToolCallsPerAnswer) {
            throw tooLarge('maxToolCallsPerAnswer');
          }
          calls.set(part.index, { id: part.id, name: part.name, arguments: '', bytes: 0 });
          if (hiddenToolNames.has(part.name)) hiddenIndexes.add(part.index);
          emit('tool_call_start', { index: part.index, toolCallId: part.id, toolName: part.name });
          break;
        case 'tool-call-delta': {
          const call = calls.get(part.index);
          if (!call)
            throw new ModelError(
              `The model sent arguments for tool call ${part.index}, which it never started.`,
            );
          const bytes = utf8Bytes(part.argumentsDelta);
          call.bytes += bytes;
          if (call.bytes > limits.maxToolCallBytes) throw tooLarge('maxToolCallBytes');
          count(bytes);
          call.arguments += part.argumentsDelta;
          emit('tool_call_delta', {
            index: part.index,
            toolCallId: call.id,
            toolName: call.name,
            argumentsDelta: part.argumentsDelta,
          });
          break;
        }
        case 'tool-call-stop': {
          const call = calls.get(part.index);
          if (!call)
            throw new ModelError(`The model stopped tool call ${part.index}, which it never started.`);
          if (part.providerMetadata !== undefined) call.providerMetadata = part.providerMetadata;
          emit('tool_call_stop', {
            index: part.index,
            toolCallId: call.id,
            toolName: call.name,
            arguments: call.arguments,
          });
          break;
        }
        case 'usage':
          execution.addUsage(part.usage);
          emit('usage', { usage: new Usage(part.usage) });
          break;
        case 'response-metadata':
          responseId = part.id ?? responseId;
          responseModelId = part.modelId ?? responseModelId;
          break;
        case 'finish':
          finish = part;
          break;
      }
    }
  } catch (error) {
    if (signal.aborted) throw stopReason(signal);
    if (GhostError.isInstance(error)) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new ModelError(`${describeModel} failed on turn ${turn}: ${message}`, {
      cause: error,
    });
  } finally {
    watchdog.dispose();
    // A stream abandoned on abort or idleness is told to stop (its signal has aborted), but
    // never waited for.
    iterator?.return?.()?.catch(() => {});
  }
  if (finish === undefined) {
    throw new ModelResponseError(
      `${describeModel}'s stream ended on turn ${turn} without a 'finish' part, so its answer may be incomplete.`,
    );
  }
  const raw = finish.rawReason === undefined ? '' : ` (${finish.rawReason})`;
  if (finish.reason === 'content-filter') {
    throw new ModelContentFilterError(
      `${describeModel}'s answer was stopped by the provider's content filter on turn ${turn}${raw}.`,
      { provider: model.provider },
    );
  }
  if (finish.reason === 'error') {
    throw new ModelResponseError(`${describeModel} finished turn ${turn} with an error${raw}.`, {
      provider: model.provider,
    });
  }
  const toolCalls = [...calls.entries()]
    .sort(([left], [right]) => left - right)
    .map(([, call]) => ({
      id: call.id,
      name: call.name,
      arguments: call.arguments,
      ...(call.providerMetadata !== undefined ? { providerMetadata: call.providerMetadata } : {}),
    }));
  emit('model_stop', {
    turn,
    finishReason: finish.reason,
    ...(finish.rawReason !== undefined ? { rawFinishReason: finish.rawReason } : {}),
    ...(responseId !== undefined ? { responseId } : {}),
    ...(responseModelId !== undefined ? { responseModelId } : {}),
    text,
  });
  return { text, toolCalls, reasoning, finishReason: finish.reason };
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
  // Read again at every turn: a tool source may have changed the tools since the last one.
  const environmentOf = (tools: ReadonlyMap<string, Tool>): ToolCallEnvironment => ({
    runContext,
    emit,
    budget: loop.budget,
    lock: loop.lock,
    tools,
    controlToolNames,
    inScope: execution.inScope,
    ...(loop.approvals === undefined ? {} : { approvals: loop.approvals }),
  });
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
      environment: environmentOf(loop.tools),
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
      const tools = loop.tools;
      const environment = environmentOf(tools);
      const request: ModelRequest = {
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
        await loadSchemaCompiler();
        const parsed = output.parse(result.text);
        if (parsed.ok) {
          outputValue = parsed.value;
          break;
        }
        if (isRepairing) {
          throw new OutputValidationError(
            `Agent '${loop.agentName}''s answer did not match its output schema, even after a repair turn: ${parsed.problems.slice(0, 5).join('; ')}.`,
            { text: result.text, problems: parsed.problems },
          );
        }
        // One repair turn: the model sees what was wrong and answers again.
        isRepairing = true;
        messages.push({ role: 'user', content: repairRequest(parsed.problems) });
        continue;
      }
      messages.push({ role: 'assistant', content: result.text, toolCalls: result.toolCalls, ...reasoning });
      const outcomes = await runToolCalls(result.toolCalls, environment, loop.limits.maxParallelToolCalls);
      const suspended = loop.suspension?.take() ?? [];
      const waiting = new Set(suspended.map((call) => call.toolCallId));
      for (const outcome of outcomes) {
        if (!waiting.has(outcome.toolCallId)) messages.push(toolResultMessage(outcome));
      }
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

function runToolCalls(
  calls: readonly ModelToolCall[],
  environment: ToolCallEnvironment,
  maxParallel: number,
): Promise<ToolCallOutcome[]> {
  const limit = new ConcurrencyLimit(maxParallel);
  return Promise.all(calls.map((call) => limit.run(() => runToolCall(parseArguments(call), environment))));
}
