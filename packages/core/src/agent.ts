import type { Static, TObject, TSchema, TString } from 'typebox';
import type { AgentCodeMode } from './agent-code-mode.js';
import { type CheckedAgentDefinition, checkAgentDefinition } from './agent-definition-check.js';
import type { AgentInput } from './agent-input.js';
import { type InvocationRequest, invocationEntrypoint } from './agent-invocation.js';
import type { AgentLimits } from './agent-loop.js';
import {
  type ApprovalMode,
  askOptionsOfResume,
  checkResumeDecisions,
  type ResumeOptions,
} from './agent-resume.js';
import { createAgentRun } from './agent-run.js';
import { type AgentToolOptions, agentTool } from './agent-tool.js';
import type { ModelMessage, ModelSettings, ModelV1, ProviderOptions } from './model.js';
import { registerNestableAgent } from './nested-agent.js';
import type { Run, RunEntrypoint, RunInit, RunStream } from './run.js';
import type { SessionOptions } from './run-session.js';
import type { Runtime } from './runtime.js';
import type { SubagentDefinition } from './subagent-definition.js';
import type { TelemetryV1 } from './telemetry.js';
import type { Tool } from './tool.js';
import type { ToolSource } from './tool-source.js';

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
   * Tools made with `defineTool()`, and tool sources (such as an MCP server from `@ghost/mcp-client`)
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

export { defaultAgentLimits } from './agent-limits.js';
export { resolveDeadline } from './agent-run.js';

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
  const checked = checkAgentDefinition(definition);
  const createRun = (input: AgentInput, options?: AskOptions, resume?: RunInit['resume']): Run =>
    createAgentRun(checked, input, options, resume);
  const createResumeRun = (options: ResumeOptions & AskOptions): Run => {
    const resume = checkResumeDecisions(options);
    const askOptions = askOptionsOfResume(options);
    return createRun([], { ...askOptions, approvals: askOptions.approvals ?? 'suspend' }, resume);
  };

  const agent: Agent = Object.freeze({
    kind: 'agent' as const,
    name: checked.name,
    instructions: checked.instructions,
    model: checked.model,
    tools: Object.freeze([...checked.toolsByName.values()]),
    toolSources: Object.freeze([...checked.toolSources]),
    limits: checked.limits,
    isCodeMode: checked.codeMode !== undefined,
    createRun,
    ask: async (input: AgentInput, options?: AskOptions) => createRun(input, options).execute(),
    streamAsk: (input: AgentInput, options?: AskOptions) => createRun(input, options).stream(),
    resume: async (options: ResumeOptions & AskOptions) => createResumeRun(options).execute(),
    streamResume: (options: ResumeOptions & AskOptions) => createResumeRun(options).stream(),
    asTool: (options?: AgentToolOptions) => agentTool(agent, options),
  }) as Agent;
  registerNestableAgent(agent, {
    entrypoint: (conversation, extraTools) => nestedEntrypoint(checked, conversation, extraTools),
    telemetry: checked.telemetry,
  });
  return agent as Agent<OutputOf<OutputSchema>>;
}

/** The entrypoint of the agent nested in another run: it answers with its own output schema and settings. */
function nestedEntrypoint(
  agent: CheckedAgentDefinition,
  conversation: readonly ModelMessage[],
  extraTools: readonly Tool[] | undefined,
): RunEntrypoint {
  const request: InvocationRequest = {
    ...(agent.output ? { output: agent.output } : {}),
    ...(agent.settings ? { settings: agent.settings } : {}),
    ...(agent.providerOptions ? { providerOptions: agent.providerOptions } : {}),
    ...(extraTools === undefined ? {} : { extraTools }),
  };
  return invocationEntrypoint(agent, conversation, request);
}
