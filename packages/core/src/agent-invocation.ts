import type { AgentCodeModeRun, PreparedAgentCodeMode } from './agent-code-mode.js';
import type { CheckedAgentDefinition } from './agent-definition-check.js';
import { conversationOf } from './agent-input.js';
import { type AgentLoopInput, runAgentLoop } from './agent-loop.js';
import { CancelledError, DeadlineExceededError } from './errors.js';
import type { ModelMessage, ModelSettings, ModelV1, ProviderOptions } from './model.js';
import { bindInvocationScope } from './nested-agent.js';
import { callsBeforeResume } from './resume-paused-calls.js';
import type { RunEntrypoint, RunExecution, RunResult } from './run.js';
import { stopReason } from './run-context.js';
import { RunTools } from './run-tools.js';
import type { StreamEventDataMap } from './stream-event.js';
import type { StructuredOutput } from './structured-output.js';
import { SubagentManager } from './subagent-manager.js';
import type { Tool } from './tool.js';
import { type ApprovalGate, approvalGateFor, SuspendingApprovalGate } from './tool-approval.js';
import { runToolCall, summarizeError, ToolCallBudget, type ToolCallEnvironment } from './tool-call-runner.js';
import { ToolLock } from './tool-lock.js';

/** What one invocation of an agent asks beyond its conversation: the answer's schema and the model's settings. */
export interface InvocationRequest {
  readonly output?: StructuredOutput;
  readonly settings?: ModelSettings;
  readonly providerOptions?: ProviderOptions;
  /**
   * Tools the one running the agent adds for this invocation (an assembly's handoff tools):
   * model-facing, in code mode too, and over the agent's own tools of the same name.
   */
  readonly extraTools?: readonly Tool[];
}

/**
 * The entrypoint of one invocation: announces it (`invocation_start`), runs it, and ends it with
 * `invocation_stop` or `invocation_error`, whatever failed, setup included.
 */
export function invocationEntrypoint(
  agent: CheckedAgentDefinition,
  conversation: readonly ModelMessage[],
  request: InvocationRequest,
): RunEntrypoint {
  const { name } = agent;
  return {
    agentName: name,
    inputLength: conversation.length,
    async execute(execution) {
      const { invocation } = execution.runContext;
      const { invocationId } = invocation;
      const isNested = execution.placement.source !== undefined;
      execution.emit('invocation_start', {
        invocationId,
        agentName: name,
        input: invocation.input,
        ...(isNested ? { messages: copyOfMessages(conversation) } : {}),
      });
      let result: RunResult;
      try {
        result = await runInvocation(agent, conversation, request, execution);
      } catch (error) {
        execution.emit('invocation_error', {
          invocationId,
          agentName: name,
          ...invocationFailure(error, execution.signal),
        });
        throw error;
      }
      execution.emit('invocation_stop', { invocationId, response: result.text });
      return result;
    },
  };
}

/** What an invocation's direct tool calls, and its program's brokered ones, share. */
interface InvocationToolState {
  readonly budget: ToolCallBudget;
  readonly lock: ToolLock;
  readonly approvals: ApprovalGate;
  readonly currentTools: () => ReadonlyMap<string, Tool>;
}

/** Runs one invocation of the agent, whoever drives it: a run of its own, or a run it is nested in. */
async function runInvocation(
  agent: CheckedAgentDefinition,
  conversation: readonly ModelMessage[],
  request: InvocationRequest,
  execution: RunExecution,
): Promise<RunResult> {
  const { name, limits, toolsByName, toolSources, codeMode } = agent;
  const resumed = execution.resume;
  const model =
    typeof agent.model === 'string' ? await execution.runtime.registry.model(agent.model) : agent.model;
  const budget = new ToolCallBudget(limits.maxToolCalls, {
    parent: execution.placement.parentBudget,
    agentName: name,
    used: resumed === undefined ? 0 : callsBeforeResume(resumed),
  });
  // Agents this invocation's tools run nested count their calls toward this budget.
  bindInvocationScope(execution, { agentName: name, budget, maxDepth: limits.maxDepth });
  const lock = new ToolLock();
  const approvals = approvalGateFor(execution, name, limits.approvalTimeoutMs);
  // Sources open first, so the run closes them after code mode (closers run in reverse).
  const runTools =
    toolSources.length === 0
      ? undefined
      : await RunTools.open(
          name,
          [...toolsByName.values()],
          toolSources,
          execution.runContext,
          execution.register,
        );
  const currentTools = (): ReadonlyMap<string, Tool> => runTools?.current ?? toolsByName;
  let running: AgentCodeModeRun | undefined;
  if (codeMode) {
    running = await startCodeMode(name, codeMode, execution, { budget, lock, approvals, currentTools });
    runTools?.onChange((tools) => running?.updateTools?.(tools));
  }
  const loopInput = loopInputFor(agent, conversation, request, execution, {
    model,
    running,
    state: { budget, lock, approvals, currentTools },
  });
  return runAgentLoop(loopInput, execution);
}

/** Starts the invocation's code mode, closed with the run. */
async function startCodeMode(
  agentName: string,
  codeMode: PreparedAgentCodeMode,
  execution: RunExecution,
  state: InvocationToolState,
): Promise<AgentCodeModeRun> {
  // Brokered calls see every tool, and share the budget and the lock with direct calls.
  const brokerEnvironment: ToolCallEnvironment = {
    runContext: execution.runContext,
    emit: execution.emit,
    budget: state.budget,
    lock: state.lock,
    get tools() {
      return state.currentTools();
    },
    inScope: execution.inScope,
    approvals: state.approvals,
  };
  const opened = await codeMode.start({
    agentName,
    runtime: execution.runtime,
    runContext: execution.runContext,
    tools: [...state.currentTools().values()],
    callTool: (call) => runToolCall(call, brokerEnvironment),
    emitProgramEvent: execution.emit,
    attachSandbox: execution.attachSandbox,
  });
  execution.register(() => opened.close());
  return opened;
}

/** The agent loop's input for one invocation; its instructions and tools are read at every model turn. */
function loopInputFor(
  agent: CheckedAgentDefinition,
  conversation: readonly ModelMessage[],
  request: InvocationRequest,
  execution: RunExecution,
  invocation: {
    readonly model: ModelV1;
    readonly running: AgentCodeModeRun | undefined;
    readonly state: InvocationToolState;
  },
): AgentLoopInput {
  const { name, instructions, limits, subagents } = agent;
  const { model, running, state } = invocation;
  const resumed = execution.resume;
  // Only the run's own agent's direct calls suspend; programs and nested agents wait in process.
  const suspension =
    execution.approvalMode === 'suspend' && execution.placement.source === undefined
      ? new SuspendingApprovalGate(limits.approvalTimeoutMs)
      : undefined;
  // Made after code mode, and outside its catalog: the controls stay the model's own, as do
  // the tools an assembly adds (a swarm member's handoffs).
  const subagentTools =
    subagents.size === 0 ? [] : new SubagentManager(name, subagents, limits, execution).tools();
  const { output, settings, providerOptions, extraTools } = request;
  const modelOnlyTools = [...subagentTools, ...(extraTools ?? [])];
  // Read at every model turn, so a tool source's change reaches the next turn.
  return {
    agentName: name,
    get instructions() {
      return running ? `${instructions}\n\n${running.instructions}` : instructions;
    },
    model,
    get tools() {
      const tools = running ? toolMap(running.modelTools) : state.currentTools();
      return modelOnlyTools.length === 0 ? tools : withTools(tools, modelOnlyTools);
    },
    limits,
    // The session's history comes first; checked again as one conversation.
    messages:
      resumed !== undefined
        ? [...execution.history, ...resumed.paused.turn]
        : execution.history.length === 0
          ? conversation
          : conversationOf(name, [...execution.history, ...conversation]),
    ...(output ? { output } : {}),
    ...(settings ? { settings } : {}),
    ...(providerOptions ? { providerOptions } : {}),
    budget: state.budget,
    lock: state.lock,
    approvals: suspension ?? state.approvals,
    ...(suspension ? { suspension } : {}),
    ...(resumed ? { resume: resumed } : {}),
    ...(running ? { controlToolNames: running.controlToolNames } : {}),
  };
}

function toolMap(tools: readonly Tool[]): ReadonlyMap<string, Tool> {
  return new Map(tools.map((tool) => [tool.name, tool]));
}

/** `tools` and then `extra` (the subagent controls), as the model sees them. */
function withTools(tools: ReadonlyMap<string, Tool>, extra: readonly Tool[]): ReadonlyMap<string, Tool> {
  const merged = new Map(tools);
  for (const tool of extra) merged.set(tool.name, tool);
  return merged;
}

/** How an invocation that threw ended (out of time, stopped, or failed), and why. */
function invocationFailure(
  error: unknown,
  signal: AbortSignal,
): Pick<StreamEventDataMap['invocation_error'], 'outcome' | 'error'> {
  // A stopped invocation reports why it was stopped (the run's cancellation or deadline, or the
  // timeout of the tool call that ran it), not the abort it threw.
  const reason: unknown = signal.aborted ? signal.reason : error;
  const summary = summarizeError(signal.aborted && !(reason instanceof Error) ? stopReason(signal) : reason);
  if (DeadlineExceededError.isInstance(reason)) return { outcome: 'partial', error: summary };
  if (signal.aborted || CancelledError.isInstance(reason)) return { outcome: 'cancelled', error: summary };
  return { outcome: 'failed', error: summary };
}

/**
 * A copy of messages an event can freeze: the messages and their lists are new, so freezing the
 * event leaves the conversation the agent goes on with as it was.
 */
function copyOfMessages(messages: readonly ModelMessage[]): ModelMessage[] {
  return messages.map((message) => {
    const copy: Record<string, unknown> = { ...message };
    for (const [key, value] of Object.entries(copy)) {
      if (Array.isArray(value)) {
        copy[key] = value.map((item: unknown) =>
          typeof item === 'object' && item !== null ? { ...item } : item,
        );
      }
    }
    return copy as unknown as ModelMessage;
  });
}
