import { randomUUID } from 'node:crypto';
import type { Static, TObject, TSchema, TString } from 'typebox';
import type { AgentCodeMode, AgentCodeModeRun, PreparedAgentCodeMode } from './agent-code-mode.js';
import { type AgentInput, conversationOf, latestUserText } from './agent-input.js';
import { type AgentLimits, type AgentLoopInput, runAgentLoop } from './agent-loop.js';
import {
  type ApprovalMode,
  askOptionsOfResume,
  checkApprovalMode,
  checkResumeDecisions,
  type ResumeOptions,
} from './agent-resume.js';
import { type AgentToolOptions, agentTool } from './agent-tool.js';
import { CancelledError, ConfigurationError, DeadlineExceededError } from './errors.js';
import type { ModelMessage, ModelSettings, ModelV1, ProviderOptions } from './model.js';
import { defaultModelStreamLimits } from './model.js';
import { bindInvocationScope, registerNestableAgent } from './nested-agent.js';
import { callsBeforeResume } from './resume-paused-calls.js';
import {
  Run,
  type RunEntrypoint,
  type RunExecution,
  type RunInit,
  type RunResult,
  type RunStream,
} from './run.js';
import { type Invocation, stopReason } from './run-context.js';
import { checkSessionOptions, type SessionOptions } from './run-session.js';
import { RunTools } from './run-tools.js';
import { defaultRuntime, type Runtime } from './runtime.js';
import type { StreamEventDataMap } from './stream-event.js';
import { prepareStructuredOutput, type StructuredOutput } from './structured-output.js';
import { checkSubagents, type SubagentDefinition, subagentControlToolNames } from './subagent-definition.js';
import { SubagentManager } from './subagent-manager.js';
import { checkTelemetry, type TelemetryV1 } from './telemetry.js';
import type { Tool } from './tool.js';
import { approvalGateFor, SuspendingApprovalGate } from './tool-approval.js';
import { runToolCall, summarizeError, ToolCallBudget, type ToolCallEnvironment } from './tool-call-runner.js';
import { ToolLock } from './tool-lock.js';
import { isToolSource, type ToolSource } from './tool-source.js';

export type { AgentInput } from './agent-input.js';
export type { AgentLimits } from './agent-loop.js';

/** The options of {@link defineAgent}. */
export interface AgentDefinition<OutputSchema extends TSchema | undefined = TSchema | undefined> {
  /** A name for logs and events, such as `support`. */
  readonly name: string;
  /** The system instructions. Default: `You are a helpful agent.` */
  readonly instructions?: string;
  /** A model, or a `provider:model` id resolved through the runtime's registry. */
  readonly model: ModelV1 | string;
  /**
   * Tools made with `defineTool()`, and tool sources (such as an MCP server from `@ghost/mcp`)
   * whose tools are known when a run starts and may change while it runs.
   */
  readonly tools?: readonly (Tool | ToolSource)[];
  readonly limits?: Partial<AgentLimits>;
  /**
   * Code mode, made by `codeMode()` from `@ghost/code-mode`: the model gets `exec`, `wait` and
   * `stop` and writes programs that call the tools, instead of calling them one turn at a time.
   */
  readonly codeMode?: AgentCodeMode;
  /**
   * A typebox schema the final answer must match (structured output). The provider's native JSON
   * mode is used where it has one; the answer is validated with this schema, the model gets one
   * repair turn on a mismatch, then the run fails with an `OutputValidationError`. The value is
   * `run.output`, typed from the schema.
   */
  readonly output?: OutputSchema;
  /** Sampling settings (temperature, maxOutputTokens, ...) sent with every model call. */
  readonly modelSettings?: ModelSettings;
  /** Options for the provider, keyed by its name: `{ openai: { reasoning: { effort: 'low' } } }`. */
  readonly providerOptions?: ProviderOptions;
  /**
   * Telemetry for this agent's runs, beside the runtime's: `openTelemetry()` from `@ghost/otel`,
   * or any `TelemetryV1` plugin, or a list.
   */
  readonly telemetry?: TelemetryV1 | readonly TelemetryV1[];
  /**
   * Agents this one may start by itself as subagents. The model gets five control tools:
   * `spawn_subagent` (`{ kind, task_name, task, mode: 'sync' | 'async' }`),
   * `send_message_to_subagent`, `interject_subagent`, `wait_for_subagents` and
   * `list_subagents`. Each subagent runs nested in the run (its cancellation, deadline and
   * usage) with a conversation that lives on across its turns; every subagent still working
   * when this agent's invocation ends is cancelled. With code mode on, the control tools stay
   * model-facing and never enter a program's catalog. Limits: `maxLiveSubagents`,
   * `maxSubagents`, `maxQueuedSubagentMessages`, `subagentWaitMs` and `maxDepth`.
   *
   * @example
   * ```ts
   * const lead = defineAgent({
   *   name: 'lead',
   *   model,
   *   subagents: [
   *     { agent: researcher, description: 'Finds and cites sources on one question.' },
   *     { agent: critic, kind: 'review', description: 'Reviews a draft for gaps.' },
   *   ],
   * });
   * ```
   */
  readonly subagents?: readonly SubagentDefinition[];
}

/** The options of one `ask`, `streamAsk` or `createRun`. */
export interface AskOptions {
  /** Cancels the run: it ends as `cancelled`, with an empty response. */
  readonly signal?: AbortSignal;
  /** A time budget in milliseconds; when it runs out the run ends as `partial`. */
  readonly timeoutMs?: number;
  /** An absolute deadline (a `Date` or milliseconds since the epoch); the earlier of this and `timeoutMs` wins. */
  readonly deadline?: Date | number;
  /**
   * A trusted caller id for authorization. Never take it from model output. With a `session`, the
   * session's `actor` is the run's actor id (give one or the other, or both the same).
   */
  readonly actorId?: string;
  /**
   * Continue a stored conversation: the run loads the session's history before `input` (so pass only
   * the new message) and writes its turn when it ends. Needs the runtime's `sessionStore`
   * (`createRuntime({ sessionStore })`).
   *
   * @example
   * ```ts
   * await agent.ask('And shipping?', { runtime, session: { id: chatId, actor: user.id } });
   * ```
   */
  readonly session?: SessionOptions;
  /** Application data for tools and authorization. */
  readonly context?: Readonly<Record<string, unknown>>;
  /** Application metadata for tracing and logs. */
  readonly metadata?: Readonly<Record<string, unknown>>;
  /** The runtime to run in; default: the process default from `configure()`. */
  readonly runtime?: Runtime;
  /** A schema for this run's answer, instead of the agent's `output` (see `AgentDefinition.output`). */
  readonly output?: TSchema;
  /** Settings for this run, over the agent's `modelSettings`, key by key. */
  readonly modelSettings?: ModelSettings;
  /** Provider options for this run, over the agent's, provider by provider. */
  readonly providerOptions?: ProviderOptions;
  /**
   * Stream the events of agents nested in the run (agents its tools run, `agent.asTool()`) as
   * `agent_stream` events, each with its source and a frozen copy of the agent's event. Without
   * it only the run's own agent's events are streamed (a nested agent shows as the tool call
   * that ran it). They hold what every participating agent sees and says: ask for them only for
   * a destination that may see all of it. Default false.
   */
  readonly includeAgentEvents?: boolean;
  /**
   * How a call of a tool with `needsApproval` waits for its decision. `wait` (the default): in
   * this process, answered with `run.approve()` / `run.reject()`. `suspend`: the run saves its
   * pause in its `session` and ends as `suspended`; any process continues it later with
   * `agent.resume({ session, decisions })`. Needs a `session`. Only the run's own agent's calls
   * suspend: a code-mode program's calls and a nested agent's still wait in process. See
   * `docs/guides/approvals.md`.
   */
  readonly approvals?: ApprovalMode;
}

/** {@link AskOptions} with an `output` schema: the run's `output` is typed from it. */
export type AskOptionsWithOutput<Schema extends TSchema> = AskOptions & { readonly output: Schema };

/** The type of `run.output` for an agent's `output` schema: `unknown` when it has none. */
export type OutputOf<Schema extends TSchema | undefined> = Schema extends TSchema ? Static<Schema> : unknown;

/**
 * An agent made by {@link defineAgent}: ask it something to get a {@link Run}. `Output` is the
 * type of `run.output`, from the agent's `output` schema.
 */
export interface Agent<Output = unknown> {
  readonly kind: 'agent';
  readonly name: string;
  readonly instructions: string;
  readonly model: ModelV1 | string;
  /** The agent's plain tools (those of its tool sources are known per run). */
  readonly tools: readonly Tool[];
  /** The agent's tool sources, opened by each run. */
  readonly toolSources: readonly ToolSource[];
  readonly limits: AgentLimits;
  /** Whether the agent runs in code mode. */
  readonly isCodeMode: boolean;
  /**
   * Runs the agent and resolves to the finished run (whatever its outcome). `input` is a message,
   * or a conversation to continue: `[...run.messages, { role: 'user', content: 'and shipping?' }]`.
   */
  ask<Schema extends TSchema>(
    input: AgentInput,
    options: AskOptionsWithOutput<Schema>,
  ): Promise<Run<Static<Schema>>>;
  ask(input: AgentInput, options?: AskOptions): Promise<Run<Output>>;
  /** Runs the agent on `input`, streaming its events; `.run` resolves to the finished run. */
  streamAsk<Schema extends TSchema>(
    input: AgentInput,
    options: AskOptionsWithOutput<Schema>,
  ): RunStream<Static<Schema>>;
  streamAsk(input: AgentInput, options?: AskOptions): RunStream<Output>;
  /** Makes a run that has not started: register resources on it, then `execute()` or `stream()` it. */
  createRun<Schema extends TSchema>(
    input: AgentInput,
    options: AskOptionsWithOutput<Schema>,
  ): Run<Static<Schema>>;
  createRun(input: AgentInput, options?: AskOptions): Run<Output>;
  /**
   * Continues a run that paused for a person's decision (`approvals: 'suspend'`), in this process
   * or any other sharing the session store, and resolves to the finished run. The resume claims
   * the pause under the session's lock: a second resume of the same pause runs nothing and fails
   * with `RunResumeConflictError`. Each approved call runs at most once, even if a process dies.
   *
   * @example
   * ```ts
   * const paused = await agent.ask('Refund order 1042', { runtime, session, approvals: 'suspend' });
   * // ... later, in any process:
   * const [waiting] = paused.pendingApprovals;
   * const run = await agent.resume({ runtime, session, decisions: { [waiting.approvalId]: 'approve' } });
   * ```
   */
  resume(options: ResumeOptions & AskOptions): Promise<Run<Output>>;
  /** {@link Agent.resume}, streaming the resumed run's events; `.run` resolves to the finished run. */
  streamResume(options: ResumeOptions & AskOptions): RunStream<Output>;
  /**
   * This agent as a tool another agent can call: the model sends `{ input }` (the task, with
   * everything the agent needs: it does not see the caller's conversation) and reads the
   * agent's answer. The call runs the agent inside the caller's run (its cancellation, deadline
   * and usage; see {@link AgentToolOptions} for the rest). Works as a code-mode tool too: a
   * program can call it like any other.
   *
   * @example
   * ```ts
   * const researcher = defineAgent({ name: 'researcher', model, tools: [search] });
   * const writer = defineAgent({
   *   name: 'writer',
   *   model,
   *   tools: [researcher.asTool({ description: 'Finds facts on the web and cites them.' })],
   * });
   * const run = await writer.ask('Write a paragraph on the history of Lisbon.');
   * ```
   */
  asTool(options?: AgentToolOptions): AgentTool;
}

/** The tool {@link Agent.asTool} makes: its input is `{ input: string }`, its result the agent's answer. */
export type AgentTool = Tool<TObject<{ input: TString }>, string>;

/** The default limits of every agent. */
export const defaultAgentLimits: AgentLimits = Object.freeze({
  maxTurns: 100,
  maxToolCalls: 1_000,
  maxParallelToolCalls: 8,
  maxDepth: 8,
  maxLiveSubagents: 8,
  maxSubagents: 20,
  maxQueuedSubagentMessages: 8,
  subagentWaitMs: 30_000,
  approvalTimeoutMs: 600_000,
  ...defaultModelStreamLimits,
});

const definitionKeys = new Set([
  'name',
  'instructions',
  'model',
  'tools',
  'limits',
  'codeMode',
  'output',
  'modelSettings',
  'providerOptions',
  'telemetry',
  'subagents',
]);
const askOptionKeys = new Set([
  'signal',
  'timeoutMs',
  'deadline',
  'actorId',
  'session',
  'context',
  'metadata',
  'runtime',
  'output',
  'modelSettings',
  'providerOptions',
  'includeAgentEvents',
  'approvals',
]);

function rejectUnknownKeys(value: object, known: Set<string>, where: string): void {
  for (const key of Object.keys(value)) {
    if (!known.has(key)) {
      throw new ConfigurationError(
        `${where} has no option '${key}'. Known options: ${[...known].join(', ')}.`,
        {
          code: 'OPTION_UNKNOWN',
          option: key,
        },
      );
    }
  }
}

function resolveLimits(agentName: string, limits: Partial<AgentLimits> = {}): AgentLimits {
  rejectUnknownKeys(limits, new Set(Object.keys(defaultAgentLimits)), `Agent '${agentName}' limits`);
  const resolved = { ...defaultAgentLimits, ...limits };
  for (const [key, value] of Object.entries(resolved)) {
    if (!Number.isInteger(value) || value < 1) {
      throw new ConfigurationError(
        `Agent '${agentName}' has limits.${key} = ${value}; use a whole number of at least 1.`,
        {
          code: 'AGENT_LIMIT_INVALID',
        },
      );
    }
  }
  return Object.freeze(resolved);
}

function resolveTools(
  agentName: string,
  tools: readonly (Tool | ToolSource)[] = [],
): { byName: ReadonlyMap<string, Tool>; sources: readonly ToolSource[] } {
  const byName = new Map<string, Tool>();
  const sources: ToolSource[] = [];
  for (const tool of tools) {
    if (isToolSource(tool)) {
      sources.push(tool);
      continue;
    }
    if (tool?.kind !== 'tool') {
      throw new ConfigurationError(
        `Agent '${agentName}' has a tool that was not made with defineTool() and is not a tool source.`,
        { code: 'AGENT_TOOL_INVALID' },
      );
    }
    if (byName.has(tool.name)) {
      throw new ConfigurationError(
        `Agent '${agentName}' has two tools named '${tool.name}'; tool names must be unique.`,
        {
          code: 'AGENT_TOOL_DUPLICATE',
        },
      );
    }
    byName.set(tool.name, tool);
  }
  return { byName, sources };
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

function prepareCodeMode(
  agentName: string,
  codeMode: AgentCodeMode | undefined,
  tools: readonly Tool[],
  hasToolSources: boolean,
): PreparedAgentCodeMode | undefined {
  if (codeMode === undefined) return undefined;
  if (codeMode?.kind !== 'code-mode' || typeof codeMode.prepare !== 'function') {
    throw new ConfigurationError(
      `Agent '${agentName}' has a codeMode that was not made with codeMode() from @ghost/code-mode.`,
      { code: 'AGENT_CODE_MODE_INVALID' },
    );
  }
  return codeMode.prepare({ agentName, tools, hasToolSources });
}

/** @internal The earlier of `timeoutMs` from now and `deadline`, checked; shared with assemblies' runs. */
export function resolveDeadline(options: {
  readonly timeoutMs?: number | undefined;
  readonly deadline?: Date | number | undefined;
}): number | undefined {
  const candidates: number[] = [];
  if (options.timeoutMs !== undefined) {
    if (!Number.isFinite(options.timeoutMs) || options.timeoutMs < 0) {
      throw new ConfigurationError(
        `timeoutMs must be a non-negative number of milliseconds, not ${options.timeoutMs}.`,
      );
    }
    candidates.push(Date.now() + options.timeoutMs);
  }
  if (options.deadline !== undefined) {
    const deadline = options.deadline instanceof Date ? options.deadline.getTime() : options.deadline;
    if (!Number.isFinite(deadline))
      throw new ConfigurationError('deadline must be a valid Date or epoch milliseconds.');
    candidates.push(deadline);
  }
  return candidates.length === 0 ? undefined : Math.min(...candidates);
}

function isModel(value: unknown): value is ModelV1 {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as ModelV1).specificationVersion === 'model-v1' &&
    typeof (value as ModelV1).stream === 'function'
  );
}

/**
 * Defines an agent: a model, instructions and tools. Mistakes in the definition throw a
 * `ConfigurationError` here.
 *
 * @example
 * ```ts
 * const support = defineAgent({
 *   name: 'support',
 *   instructions: 'Answer from the help center. Be brief.',
 *   model,
 *   tools: [helpCenterLookup],
 * });
 * const run = await support.ask('How do refunds work?');
 * console.log(run.outcome, run.response);
 * ```
 */
export function defineAgent<OutputSchema extends TSchema | undefined = undefined>(
  definition: AgentDefinition<OutputSchema>,
): Agent<OutputOf<OutputSchema>> {
  const { name } = definition;
  if (typeof name !== 'string' || name.trim() === '') {
    throw new ConfigurationError('An agent needs a non-empty name.', { code: 'AGENT_NAME_INVALID' });
  }
  rejectUnknownKeys(definition, definitionKeys, `Agent '${name}'`);
  if (typeof definition.model !== 'string' && !isModel(definition.model)) {
    throw new ConfigurationError(
      `Agent '${name}' needs a model: a ModelV1 object (specificationVersion 'model-v1') or a 'provider:model' id.`,
      { code: 'AGENT_MODEL_INVALID' },
    );
  }
  const instructions = definition.instructions ?? 'You are a helpful agent.';
  const limits = resolveLimits(name, definition.limits);
  const { byName: toolsByName, sources: toolSources } = resolveTools(name, definition.tools);
  const model = definition.model;
  const codeMode = prepareCodeMode(
    name,
    definition.codeMode,
    [...toolsByName.values()],
    toolSources.length > 0,
  );
  const agentOutput =
    definition.output === undefined ? undefined : prepareStructuredOutput(name, definition.output);
  const agentSettings = checkRecord(name, 'modelSettings', definition.modelSettings);
  const agentProviderOptions = checkRecord(name, 'providerOptions', definition.providerOptions);
  const agentTelemetry = checkTelemetry(definition.telemetry, `Agent '${name}'`);
  const subagents = checkSubagents(name, definition.subagents);
  if (subagents.size > 0) {
    for (const toolName of toolsByName.keys()) {
      if (subagentControlToolNames.has(toolName)) {
        throw new ConfigurationError(
          `Agent '${name}' has a tool named '${toolName}', the name of a subagent control tool; rename the tool.`,
          { code: 'AGENT_TOOL_DUPLICATE' },
        );
      }
    }
  }
  const hasPersistedSubagents = [...subagents.values()].some((subagent) => subagent.isPersisted);

  /** Runs one invocation of the agent, whoever drives it: a run of its own, or a run it is nested in. */
  const runInvocation = async (
    conversation: readonly ModelMessage[],
    request: InvocationRequest,
    execution: RunExecution,
  ): Promise<RunResult> => {
    const resumed = execution.resume;
    const resolvedModel = typeof model === 'string' ? await execution.runtime.registry.model(model) : model;
    const budget = new ToolCallBudget(limits.maxToolCalls, {
      parent: execution.placement.parentBudget,
      agentName: name,
      used: resumed === undefined ? 0 : callsBeforeResume(resumed),
    });
    // Agents this invocation's tools run nested count their calls toward this budget.
    bindInvocationScope(execution, { agentName: name, budget, maxDepth: limits.maxDepth });
    const lock = new ToolLock();
    const approvals = approvalGateFor(execution, name, limits.approvalTimeoutMs);
    // Only the run's own agent's direct calls suspend; programs and nested agents wait in process.
    const suspension =
      execution.approvalMode === 'suspend' && execution.placement.source === undefined
        ? new SuspendingApprovalGate(limits.approvalTimeoutMs)
        : undefined;
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
    let codeModeRun: AgentCodeModeRun | undefined;
    if (codeMode) {
      // Brokered calls see every tool, and share the budget and the lock with direct calls.
      const brokerEnvironment: ToolCallEnvironment = {
        runContext: execution.runContext,
        emit: execution.emit,
        budget,
        lock,
        get tools() {
          return currentTools();
        },
        inScope: execution.inScope,
        approvals,
      };
      codeModeRun = await codeMode.start({
        agentName: name,
        runtime: execution.runtime,
        runContext: execution.runContext,
        tools: [...currentTools().values()],
        callTool: (call) => runToolCall(call, brokerEnvironment),
        emitProgramEvent: execution.emit,
        attachSandbox: execution.attachSandbox,
      });
      const opened = codeModeRun;
      execution.register(() => opened.close());
      runTools?.onChange((tools) => opened.updateTools?.(tools));
    }
    const running = codeModeRun;
    // Made after code mode, and outside its catalog: the controls stay the model's own, as do
    // the tools an assembly adds (a swarm member's handoffs).
    const subagentTools =
      subagents.size === 0 ? [] : new SubagentManager(name, subagents, limits, execution).tools();
    const { output, settings, providerOptions, extraTools } = request;
    const modelOnlyTools = [...subagentTools, ...(extraTools ?? [])];
    // Read at every model turn, so a tool source's change reaches the next turn.
    const loopInput: AgentLoopInput = {
      agentName: name,
      get instructions() {
        return running ? `${instructions}\n\n${running.instructions}` : instructions;
      },
      model: resolvedModel,
      get tools() {
        const tools = running ? toolMap(running.modelTools) : currentTools();
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
      budget,
      lock,
      approvals: suspension ?? approvals,
      ...(suspension ? { suspension } : {}),
      ...(resumed ? { resume: resumed } : {}),
      ...(running ? { controlToolNames: running.controlToolNames } : {}),
    };
    return runAgentLoop(loopInput, execution);
  };

  /**
   * The entrypoint of one invocation: announces it (`invocation_start`), runs it, and ends it with
   * `invocation_stop` or `invocation_error`, whatever failed, setup included.
   */
  const entrypointFor = (
    conversation: readonly ModelMessage[],
    request: InvocationRequest,
  ): RunEntrypoint => ({
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
        result = await runInvocation(conversation, request, execution);
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
  });

  const createRun = (input: AgentInput, options: AskOptions = {}, resume?: RunInit['resume']): Run => {
    if (typeof input !== 'string' && !Array.isArray(input)) {
      throw new ConfigurationError(
        `Agent '${name}' takes its input as a string or an array of messages (such as run.messages).`,
        { code: 'AGENT_INPUT_INVALID' },
      );
    }
    rejectUnknownKeys(options, askOptionKeys, 'ask()');
    if (options.includeAgentEvents !== undefined && typeof options.includeAgentEvents !== 'boolean') {
      throw new ConfigurationError('ask() option includeAgentEvents must be true or false.', {
        code: 'AGENT_OPTION_INVALID',
        option: 'includeAgentEvents',
      });
    }
    // A resume's conversation is the paused turn, read when its session opens.
    const conversation = resume === undefined ? conversationOf(name, input) : [];
    const output = options.output === undefined ? agentOutput : prepareStructuredOutput(name, options.output);
    const settings = mergeSettings(agentSettings, checkRecord(name, 'modelSettings', options.modelSettings));
    const providerOptions = mergeProviderOptions(
      agentProviderOptions,
      checkRecord(name, 'providerOptions', options.providerOptions),
    );
    const inputText = latestUserText(conversation);
    const runtime = options.runtime ?? defaultRuntime();
    if (hasPersistedSubagents && runtime.sessionStore === undefined) {
      throw new ConfigurationError(
        `Agent '${name}' has subagents with persist: true, but the runtime has no session store to keep them in: pass one to createRuntime({ sessionStore }), or drop persist.`,
        { code: 'AGENT_SUBAGENT_INVALID', option: 'subagents' },
      );
    }
    const session = options.session === undefined ? undefined : checkSessionOptions(options.session);
    const sessionStore = session === undefined ? undefined : runtime.sessionStore;
    if (session !== undefined && sessionStore === undefined) {
      throw new ConfigurationError(
        'ask() was given a session, but the runtime has no session store: pass one to createRuntime({ sessionStore }), such as memorySessionStore() or sqliteSessionStore({ path }) from @ghost/session-sqlite.',
        { code: 'SESSION_OPTION_INVALID', option: 'session' },
      );
    }
    if (session !== undefined && options.actorId !== undefined && options.actorId !== session.actor) {
      throw new ConfigurationError(
        "ask() was given an actorId and a session whose actor differs: a run has one trusted actor, so give only the session's actor, or the same in both.",
        { code: 'SESSION_OPTION_INVALID', option: 'actorId', conflicting: ['session.actor'] },
      );
    }
    const approvals = checkApprovalMode(options.approvals, session !== undefined);
    const runId = randomUUID();
    const invocation: Invocation = Object.freeze({
      invocationId: randomUUID(),
      runId,
      agentName: name,
      input: inputText,
      actorId: session?.actor ?? options.actorId,
      sessionId: session?.id,
      context: Object.freeze({ ...options.context }),
      metadata: Object.freeze({ ...options.metadata }),
      deadline: resolveDeadline(options),
    });
    return new Run({
      invocation,
      runtime,
      signal: options.signal,
      telemetry: [...runtime.telemetry, ...agentTelemetry],
      includeAgentEvents: options.includeAgentEvents === true,
      approvals,
      ...(resume === undefined ? {} : { resume }),
      ...(session !== undefined && sessionStore !== undefined
        ? { session: { store: sessionStore, options: session } }
        : {}),
      entrypoint: entrypointFor(conversation, {
        ...(output ? { output } : {}),
        ...(settings ? { settings } : {}),
        ...(providerOptions ? { providerOptions } : {}),
      }),
    });
  };

  const createResumeRun = (options: ResumeOptions & AskOptions): Run => {
    const resume = checkResumeDecisions(options);
    const askOptions = askOptionsOfResume(options);
    return createRun([], { ...askOptions, approvals: askOptions.approvals ?? 'suspend' }, resume);
  };

  const agent: Agent = Object.freeze({
    kind: 'agent' as const,
    name,
    instructions,
    model,
    tools: Object.freeze([...toolsByName.values()]),
    toolSources: Object.freeze([...toolSources]),
    limits,
    isCodeMode: codeMode !== undefined,
    createRun,
    ask: async (input: AgentInput, options?: AskOptions) => createRun(input, options).execute(),
    streamAsk: (input: AgentInput, options?: AskOptions) => createRun(input, options).stream(),
    resume: async (options: ResumeOptions & AskOptions) => createResumeRun(options).execute(),
    streamResume: (options: ResumeOptions & AskOptions) => createResumeRun(options).stream(),
    asTool: (options?: AgentToolOptions) => agentTool(agent, options),
  }) as Agent;
  // As a nested agent it answers with its own output schema and settings.
  const nestedRequest: InvocationRequest = {
    ...(agentOutput ? { output: agentOutput } : {}),
    ...(agentSettings ? { settings: agentSettings } : {}),
    ...(agentProviderOptions ? { providerOptions: agentProviderOptions } : {}),
  };
  registerNestableAgent(agent, {
    entrypoint: (conversation, extraTools) =>
      entrypointFor(
        conversation,
        extraTools === undefined ? nestedRequest : { ...nestedRequest, extraTools },
      ),
    telemetry: agentTelemetry,
  });
  return agent as Agent<OutputOf<OutputSchema>>;
}

/** What one invocation of an agent asks beyond its conversation: the answer's schema and the model's settings. */
interface InvocationRequest {
  readonly output?: StructuredOutput;
  readonly settings?: ModelSettings;
  readonly providerOptions?: ProviderOptions;
  /**
   * Tools the one running the agent adds for this invocation (an assembly's handoff tools):
   * model-facing, in code mode too, and over the agent's own tools of the same name.
   */
  readonly extraTools?: readonly Tool[];
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

function checkRecord<Value extends object>(
  agentName: string,
  option: 'modelSettings' | 'providerOptions',
  value: Value | undefined,
): Value | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigurationError(`Agent '${agentName}' ${option} must be an object.`, {
      code: 'AGENT_OPTION_INVALID',
      option,
    });
  }
  return value;
}

function mergeSettings(
  agent: ModelSettings | undefined,
  ask: ModelSettings | undefined,
): ModelSettings | undefined {
  if (agent === undefined || ask === undefined) return ask ?? agent;
  return { ...agent, ...ask };
}

function mergeProviderOptions(
  agent: ProviderOptions | undefined,
  ask: ProviderOptions | undefined,
): ProviderOptions | undefined {
  if (agent === undefined || ask === undefined) return ask ?? agent;
  const merged: Record<string, ProviderOptions[string]> = { ...agent };
  for (const [provider, options] of Object.entries(ask))
    merged[provider] = { ...agent[provider], ...options };
  return merged;
}
