import { raceAbort } from './abort-race.js';
import { AgentLimitError, GhostError, ModelError } from './errors.js';
import type { ModelMessage, ModelRequest, ModelStreamPart, ModelToolCall, ModelV1 } from './model.js';
import type { PendingInterjection, RunExecution, RunResult } from './run.js';
import { stopReason } from './run-context.js';
import type { Tool } from './tool.js';
import {
  type EmitEvent,
  runToolCall,
  type ToolCallBudget,
  type ToolCallEnvironment,
  type ToolCallOutcome,
  type ToolCallRequest,
} from './tool-call-runner.js';
import { ConcurrencyLimit, type ToolLock } from './tool-lock.js';
import { Usage } from './usage.js';

/** The limits of one agent's runs. */
export interface AgentLimits {
  /** Model turns per run. Default 100. */
  readonly maxTurns: number;
  /** Tool calls per run, direct and brokered. Default 1,000. */
  readonly maxToolCalls: number;
  /** Tool calls of one model turn that run at the same time. Default 8. */
  readonly maxParallelToolCalls: number;
}

/** What the loop needs of the agent. */
export interface AgentLoopInput {
  readonly agentName: string;
  readonly instructions: string;
  readonly model: ModelV1;
  /** The tools the model sees and calls directly. */
  readonly tools: ReadonlyMap<string, Tool>;
  readonly limits: AgentLimits;
  readonly input: string;
  /** The run's tool-call budget, shared with code mode's brokered calls. */
  readonly budget: ToolCallBudget;
  /** The run's exclusive lock, shared with code mode's brokered calls. */
  readonly lock: ToolLock;
  /** Code mode's control tools among `tools`: uncounted, unlocked and out of the public stream. */
  readonly controlToolNames?: ReadonlySet<string>;
}

interface TurnResult {
  readonly text: string;
  readonly toolCalls: readonly ModelToolCall[];
  readonly finishReason: string;
}

async function streamTurn(
  request: ModelRequest,
  model: ModelV1,
  turn: number,
  execution: RunExecution,
  hiddenToolNames: ReadonlySet<string>,
): Promise<TurnResult> {
  const { signal } = execution;
  const hiddenIndexes = new Set<number>();
  // Control calls (code mode's exec/wait/stop) are bookkeeping: the public stream omits them.
  const emit: EmitEvent = (type, data) => {
    const index = (data as { index?: unknown }).index;
    if (type.startsWith('tool_call_') && typeof index === 'number' && hiddenIndexes.has(index)) return;
    execution.emit(type, data);
  };
  const calls = new Map<number, { id: string; name: string; arguments: string }>();
  let text = '';
  let finishReason = 'stop';
  let iterator: AsyncIterator<ModelStreamPart> | undefined;
  try {
    iterator = model.stream(request, { signal })[Symbol.asyncIterator]();
    for (;;) {
      const step = await raceAbort(iterator.next(), signal);
      if (step.done) break;
      const part = step.value;
      switch (part.type) {
        case 'text-delta':
          text += part.text;
          execution.noteText(text);
          emit('text_delta', { text: part.text });
          break;
        case 'reasoning-delta':
          emit('reasoning_delta', { text: part.text });
          break;
        case 'tool-call-start':
          calls.set(part.index, { id: part.id, name: part.name, arguments: '' });
          if (hiddenToolNames.has(part.name)) hiddenIndexes.add(part.index);
          emit('tool_call_start', { index: part.index, toolCallId: part.id, toolName: part.name });
          break;
        case 'tool-call-delta': {
          const call = calls.get(part.index);
          if (!call)
            throw new ModelError(
              `The model sent arguments for tool call ${part.index}, which it never started.`,
            );
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
        case 'finish':
          finishReason = part.reason;
          break;
      }
    }
  } catch (error) {
    if (signal.aborted) throw stopReason(signal);
    if (GhostError.isInstance(error)) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new ModelError(`Model ${model.provider}:${model.modelId} failed on turn ${turn}: ${message}`, {
      cause: error,
    });
  } finally {
    // A stream abandoned on abort is told to stop, but never waited for.
    iterator?.return?.()?.catch(() => {});
  }
  const toolCalls = [...calls.entries()]
    .sort(([left], [right]) => left - right)
    .map(([, call]) => ({ id: call.id, name: call.name, arguments: call.arguments }));
  emit('model_stop', { turn, finishReason, text });
  return { text, toolCalls, finishReason };
}

function parseArguments(call: ModelToolCall): ToolCallRequest {
  const base = { toolCallId: call.id, toolName: call.name };
  if (call.arguments.trim() === '') return { ...base, input: {} };
  try {
    return { ...base, input: JSON.parse(call.arguments) as unknown };
  } catch (error) {
    return { ...base, input: call.arguments, argumentsError: (error as Error).message };
  }
}

/**
 * The agent's tool loop: ask the model, run the tools it calls (concurrently, bounded; exclusive
 * tools alone), give it the results, and repeat until it answers without calling a tool.
 */
export async function runAgentLoop(loop: AgentLoopInput, execution: RunExecution): Promise<RunResult> {
  const { emit, runContext } = execution;
  const { invocation } = runContext;
  emit('invocation_start', {
    invocationId: invocation.invocationId,
    agentName: loop.agentName,
    input: loop.input,
  });
  const messages: ModelMessage[] = [{ role: 'user', content: loop.input }];
  const controlToolNames = loop.controlToolNames ?? new Set<string>();
  const environment: ToolCallEnvironment = {
    runContext,
    emit,
    budget: loop.budget,
    lock: loop.lock,
    tools: loop.tools,
    controlToolNames,
  };
  const toolDefinitions = [...loop.tools.values()].map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputJsonSchema,
  }));
  let delivered: PendingInterjection[] = [];
  let turn = 0;
  let text = '';
  try {
    for (;;) {
      delivered = execution.takeInterjections();
      for (const interjection of delivered) messages.push({ role: 'user', content: interjection.message });
      if (turn >= loop.limits.maxTurns) {
        throw new AgentLimitError(
          `Agent '${loop.agentName}' used all ${loop.limits.maxTurns} turns without a final answer; raise limits.maxTurns or narrow the task.`,
          { details: { maxTurns: loop.limits.maxTurns } },
        );
      }
      turn += 1;
      runContext.throwIfStopped();
      emit('model_start', { turn, provider: loop.model.provider, modelId: loop.model.modelId });
      const request: ModelRequest = {
        instructions: loop.instructions,
        messages: [...messages],
        tools: toolDefinitions,
      };
      const result = await streamTurn(request, loop.model, turn, execution, controlToolNames);
      text = result.text;
      for (const interjection of delivered) interjection.resolve(result.text);
      delivered = [];
      if (result.toolCalls.length === 0) {
        messages.push({ role: 'assistant', content: result.text });
        if (execution.hasPendingInterjections) continue;
        break;
      }
      messages.push({ role: 'assistant', content: result.text, toolCalls: result.toolCalls });
      const outcomes = await runToolCalls(result.toolCalls, environment, loop.limits.maxParallelToolCalls);
      for (const outcome of outcomes) messages.push(toToolMessage(outcome));
    }
  } catch (error) {
    for (const interjection of delivered) interjection.reject(error);
    throw error;
  }
  emit('invocation_stop', { invocationId: invocation.invocationId, response: text });
  return { text, turns: turn, toolCalls: environment.budget.used, messages };
}

function runToolCalls(
  calls: readonly ModelToolCall[],
  environment: ToolCallEnvironment,
  maxParallel: number,
): Promise<ToolCallOutcome[]> {
  const limit = new ConcurrencyLimit(maxParallel);
  return Promise.all(calls.map((call) => limit.run(() => runToolCall(parseArguments(call), environment))));
}

function toToolMessage(outcome: ToolCallOutcome): ModelMessage {
  return {
    role: 'tool',
    toolCallId: outcome.toolCallId,
    toolName: outcome.toolName,
    content: outcome.content,
    ...(outcome.status === 'error' ? { isError: true } : {}),
    ...(outcome.artifacts.length > 0 ? { artifacts: outcome.artifacts } : {}),
  };
}
