import type { Artifact, ModelMessage } from './model.js';
import type { RunOutcome } from './run-outcome.js';
import type { Usage } from './usage.js';

/** How an error appears in events: safe to show, without a stack. */
export interface ErrorSummary {
  readonly name: string;
  readonly code: string | undefined;
  readonly message: string;
}

/** Fields every tool event carries. */
export interface ToolEventData {
  readonly toolCallId: string;
  readonly toolName: string;
  /**
   * The id of the tool call this one ran under, when a tool runs tools of its own: code mode's
   * brokered calls carry the id of the `exec` or `wait` that ran them, so traces nest.
   */
  readonly parentToolCallId?: string;
}

/**
 * Which agent of a run an `agent_stream` event comes from, and where it runs. Parallel agents,
 * even two of the same agent, differ in `invocationId` and in `path`.
 */
export interface AgentStreamSource {
  /**
   * Where the agent runs, from the run's own agent down: for each level of nesting, the place
   * that ran it (`tool:<toolCallId>`: the tool call of the agent above that runs it as a tool;
   * `step:<step>`: the assembly step that runs it, after the steps of the assemblies above it),
   * then the agent's name, then its invocation id. An agent run as a tool by the run's own agent
   * has the path `['tool:call_1', 'researcher', '<invocationId>']`; one it runs in turn adds
   * three more segments.
   */
  readonly path: readonly string[];
  /** The agent's name. */
  readonly agentName: string;
  /** The id of this invocation of the agent, unique in the run (its own `invocation_start` carries it too). */
  readonly invocationId: string;
  /** How deep the agent runs: 1 for an agent run by the run's own agent, 2 for one run by that one, and so on. */
  readonly depth: number;
}

/**
 * A stream event an agent nested in the run produced, as `agent_stream` carries it: any event
 * but the run's own (`run_start`, the terminal events) and `agent_stream` itself.
 */
export type NestedStreamEvent = Exclude<
  StreamEvent,
  { readonly type: 'agent_stream' | 'run_start' | 'run_resume' | TerminalStreamEventType }
>;

/** A tool call waiting for a person's decision: the `data` of `approval_requested`, and an entry of `run.pendingApprovals`. */
export interface ApprovalRequestedData {
  /** The id to answer with: `run.approve(approvalId)` or `run.reject(approvalId)`. A random UUID. */
  readonly approvalId: string;
  /** The id of the waiting call (its `tool_start` carries it too). */
  readonly toolCallId: string;
  /** The tool the call would run. */
  readonly toolName: string;
  /** The validated input the tool would run with. */
  readonly input: unknown;
  /** The agent that made the call. */
  readonly agentName: string;
  /**
   * Where that agent runs, when it runs nested: the same segments as its `agent_stream` events'
   * `source.path`. Absent for a call of the run's own agent.
   */
  readonly path?: readonly string[];
}

/** How a pending approval ended. */
export type ApprovalDecision = 'approved' | 'rejected' | 'timed_out' | 'cancelled';

/** The `data` of `approval_resolved`. */
export interface ApprovalResolvedData {
  /** The id its `approval_requested` carried. */
  readonly approvalId: string;
  /** The id of the call that waited. */
  readonly toolCallId: string;
  /** The tool the call would run. */
  readonly toolName: string;
  /** How it ended: only an `approved` call runs. */
  readonly decision: ApprovalDecision;
  /** With `rejected`: the message given to `run.reject`, which the model reads too. */
  readonly message?: string;
}

/** What happened to a subagent, as a `subagent` event says. */
export type SubagentPhase =
  | 'spawned'
  | 'message_queued'
  | 'turn_started'
  | 'turn_finished'
  | 'turn_failed'
  | 'cancelled';

/** The `data` of a `subagent` event. */
export interface SubagentEventData {
  readonly phase: SubagentPhase;
  /** The subagent's id: its `task_name`, unique among its parent invocation's subagents. */
  readonly subagentId: string;
  /** Which of the agent's `subagents` it is. */
  readonly kind: string;
  /** With `spawned`: whether the spawn call waits for the first answer (`sync`) or not (`async`). */
  readonly mode?: 'sync' | 'async';
  /** With `turn_*`: which of the subagent's turns, from 1 (a turn answers one message). */
  readonly turn?: number;
  /** With `message_queued`: how many messages now wait for the subagent's next turns. */
  readonly queuedMessages?: number;
  /** With `turn_finished`: the turn's answer, cut at 100,000 characters. */
  readonly response?: string;
  /** With `turn_failed` and `cancelled`: why. */
  readonly error?: ErrorSummary;
}

/** Fields every `assembly_step_*` event carries. */
export interface AssemblyStepEventData {
  /** The assembly (Workflow, Swarm or Graph) the step belongs to, by name. */
  readonly assemblyName: string;
  /** The step's id, unique in the run: its `_start`, `_stop`, `_error` and `_retry` share it. */
  readonly stepId: string;
  /** The step's name: the graph node, the swarm member, or the name of the workflow's invoked assembly. */
  readonly step: string;
  /** The agent (or nested assembly) the step runs. */
  readonly agentName: string;
  /** Where the step runs, from the run's entrypoint down, ending with `step:<step>`. */
  readonly path: readonly string[];
  /** 1 for the first attempt, 2 for the first retry, and so on. */
  readonly attempt: number;
}

/** The `data` of each stream event type. */
export interface StreamEventDataMap {
  run_start: {
    readonly runId: string;
    readonly operationId: string;
    readonly agentName: string;
  };
  /**
   * A run made by `agent.resume()` opened the paused run it continues: after `run_start`, before
   * anything runs. Traces and logs join the runs by these ids.
   */
  run_resume: {
    /** The run that paused first (a run may pause and resume several times). */
    readonly firstRunId: string;
    /** The run that saved the pause this one continues. */
    readonly pausedRunId: string;
    /** The saved pause this run claimed. */
    readonly pauseId: string;
    /** The approval ids this resume decides. */
    readonly decided: readonly string[];
  };
  invocation_start: {
    readonly invocationId: string;
    readonly agentName: string;
    /** The text of the latest user message the agent was asked. */
    readonly input: string;
    /**
     * The message(s) the agent was sent, frozen: only when the agent runs nested in another
     * (inside `agent_stream`), where the application did not write them itself.
     */
    readonly messages?: readonly ModelMessage[];
  };
  model_start: { readonly turn: number; readonly provider: string; readonly modelId: string };
  /**
   * The provider is retrying this turn's request after a retryable failure (a rate limit, an
   * unavailable model), `delayMs` from now; `attempt` is the attempt about to start (2 for the first retry).
   */
  model_retry: {
    readonly turn: number;
    readonly attempt: number;
    readonly delayMs: number;
    readonly error: ErrorSummary;
  };
  text_delta: { readonly text: string };
  reasoning_delta: { readonly text: string };
  tool_call_start: ToolEventData & { readonly index: number };
  tool_call_delta: ToolEventData & { readonly index: number; readonly argumentsDelta: string };
  tool_call_stop: ToolEventData & { readonly index: number; readonly arguments: string };
  tool_start: ToolEventData & { readonly input: unknown };
  tool_stop: ToolEventData & {
    readonly status: 'success' | 'error';
    /** What the model reads as the result. */
    readonly content: string;
    readonly value?: unknown;
    readonly error?: ErrorSummary;
    readonly artifacts?: readonly Artifact[];
    readonly durationMs: number;
  };
  /**
   * A tool call needs a person's decision (its tool's `needsApproval`) and waits for it: answer
   * with `run.approve(approvalId)` or `run.reject(approvalId, { message })`. Always on the run's
   * own stream, also for a call of an agent run nested (then `path` says where, as that agent's
   * `agent_stream` events' `source.path` does), so an application without `includeAgentEvents`
   * sees it. `approval_resolved` follows with the decision.
   */
  approval_requested: ApprovalRequestedData;
  /**
   * A pending approval was decided: `approved` (the tool runs), `rejected` (with the person's
   * `message`, if any), `timed_out` (no decision within the agent's `approvalTimeoutMs`) or
   * `cancelled` (the run, or the program that made the call, ended while it waited). Only an
   * approved call runs; the model reads the others as an error result.
   */
  approval_resolved: ApprovalResolvedData;
  /** Code mode started a program the model sent to `exec` (whose call is `toolCallId`). */
  program_start: {
    readonly toolCallId: string;
    readonly engine: string;
    readonly sandbox: string;
    readonly source: string;
  };
  /** A code-mode program reached a final status; `output` is what its last observation returned. */
  program_stop: {
    readonly toolCallId: string;
    readonly status: 'completed' | 'error' | 'terminated';
    readonly output: string;
    readonly value?: unknown;
    readonly error?: string;
  };
  usage: { readonly usage: Usage };
  model_stop: {
    readonly turn: number;
    /** Normalised: `stop`, `tool-calls`, `length` or `other`. */
    readonly finishReason: string;
    /** The provider's own finish value, such as `end_turn`, when it gave one. */
    readonly rawFinishReason?: string;
    /** The provider's id for the response, when it gave one. */
    readonly responseId?: string;
    /** The model that answered, as the provider names it, when it said. */
    readonly responseModelId?: string;
    readonly text: string;
  };
  invocation_stop: { readonly invocationId: string; readonly response: string };
  /**
   * An agent's invocation ended without an answer: it failed (`failed`), the run's deadline
   * passed (`partial`) or it was cancelled (`cancelled`). Every `invocation_start` is followed by
   * one `invocation_stop` or one `invocation_error`. For the run's own agent the run's terminal
   * event follows; for an agent nested in another, the tool call that ran it fails and the run
   * goes on.
   */
  invocation_error: {
    readonly invocationId: string;
    readonly agentName: string;
    readonly outcome: 'failed' | 'partial' | 'cancelled';
    readonly error: ErrorSummary;
  };
  /**
   * An event of an agent nested in this run (an agent run as a tool with `agent.asTool()`), for a
   * stream asked with `includeAgentEvents: true`. `source` says which agent and where;
   * `event` is a frozen copy of the agent's own event (`invocation_start`, `text_delta`,
   * `tool_start`, ..., `invocation_stop` or `invocation_error`), whose `runId` is this run's.
   * Events of agents nested deeper come as `agent_stream` events of this run too, each with
   * its full `source.path`, never wrapped twice. Parallel agents' events interleave, each
   * agent's in order. They carry what every participating agent sees and says, so ask for them
   * only for a destination that may see all of it.
   *
   * @example
   * ```ts
   * for await (const event of agent.streamAsk('Plan the trip', { includeAgentEvents: true })) {
   *   if (event.type === 'agent_stream' && event.data.event.type === 'text_delta') {
   *     console.log(`[${event.data.source.agentName}]`, event.data.event.data.text);
   *   }
   * }
   * ```
   */
  agent_stream: { readonly source: AgentStreamSource; readonly event: NestedStreamEvent };
  /**
   * Something happened to one of the agent's subagents (`defineAgent({ subagents })`): it was
   * spawned, a message for it was queued, one of its turns started, finished or failed, or it
   * was cancelled (its parent's invocation ended, or the run was cancelled or reached its
   * deadline). The subagent's own events come as `agent_stream` events (with
   * `includeAgentEvents`), placed under `subagent:<taskName>` in their `source.path`.
   */
  subagent: SubagentEventData;
  /**
   * A step of an assembly (a Workflow's invocation, a Graph's node, a Swarm member's turn)
   * started. `stepId` is unique in the run and pairs the step's events; `path` is where it runs
   * (the same segments its agent's `agent_stream` events carry before the agent's name).
   */
  assembly_step_start: AssemblyStepEventData & { readonly input: string };
  /** An assembly step finished; `response` is its agent's answer. */
  assembly_step_stop: AssemblyStepEventData & { readonly response: string; readonly durationMs: number };
  /** An assembly step failed (or timed out); `willRetry` says whether another attempt follows. */
  assembly_step_error: AssemblyStepEventData & {
    readonly error: ErrorSummary;
    readonly willRetry: boolean;
    readonly durationMs: number;
  };
  /** An assembly step is tried again after it failed, `delayMs` from now; `attempt` is the next one. */
  assembly_step_retry: AssemblyStepEventData & { readonly delayMs: number; readonly error: ErrorSummary };
  /** A graph node's several outgoing edges matched: the nodes in `to` run in parallel. */
  assembly_fork: { readonly assemblyName: string; readonly from: string; readonly to: readonly string[] };
  /** A graph node with several incoming edges got every branch it waits for, from the nodes in `from`. */
  assembly_join: { readonly assemblyName: string; readonly node: string; readonly from: readonly string[] };
  /**
   * An assembly moved from one step to the next: along a graph edge (`edge`), a graph error edge
   * (`error_edge`), or a swarm member's handoff (`handoff`).
   */
  assembly_transition: {
    readonly assemblyName: string;
    readonly from: string;
    readonly to: string;
    readonly kind: 'edge' | 'error_edge' | 'handoff';
  };
  /** A swarm's members handed off between the same pair more often than `maxHandoffRepeats`: the run fails. */
  assembly_handoff_loop: {
    readonly assemblyName: string;
    readonly from: string;
    readonly to: string;
    readonly repeats: number;
    readonly maxHandoffRepeats: number;
  };
  run_stop: { readonly outcome: 'completed'; readonly response: string; readonly usage: Usage };
  run_error: {
    readonly outcome: 'failed';
    readonly error: ErrorSummary;
    readonly cleanupFailed: boolean;
    readonly usage: Usage;
  };
  run_partial: {
    readonly outcome: 'partial';
    readonly response: string;
    readonly error: ErrorSummary;
    readonly usage: Usage;
  };
  run_cancel: { readonly outcome: 'cancelled'; readonly error: ErrorSummary; readonly usage: Usage };
  /**
   * The run paused for a person's decision (`ask(input, { session, approvals: 'suspend' })`): its
   * state is saved in the session before this event, so any process may now continue it with
   * `agent.resume({ session, decisions })`, answering the approval ids listed here.
   */
  run_suspend: {
    readonly outcome: 'suspended';
    readonly pendingApprovals: readonly ApprovalRequestedData[];
    /** The saved pause the approvals belong to. */
    readonly pauseId: string;
    readonly usage: Usage;
  };
}

/** The type names of stream events, as the spec names them. */
export type StreamEventType = keyof StreamEventDataMap;

/**
 * The events that end a run, one per outcome; exactly one of them is always the last event.
 * `run_suspend` ends only runs that opted into `approvals: 'suspend'`.
 */
export type TerminalStreamEventType = 'run_stop' | 'run_error' | 'run_partial' | 'run_cancel' | 'run_suspend';

/**
 * One thing that happened during a run, as it happened. Events are frozen: consumers cannot
 * change the running work. Narrow on `type` to read `data`.
 *
 * @example
 * ```ts
 * for await (const event of agent.streamAsk('Where is my parcel?')) {
 *   if (event.type === 'text_delta') process.stdout.write(event.data.text);
 * }
 * ```
 */
export type StreamEvent = {
  [Type in StreamEventType]: {
    readonly type: Type;
    readonly data: StreamEventDataMap[Type];
    /** The id of the run that produced the event. */
    readonly runId: string;
    /** Milliseconds since the epoch. */
    readonly timestamp: number;
  };
}[StreamEventType];

/** The stream event of one `type`. */
export type StreamEventOf<Type extends StreamEventType> = Extract<StreamEvent, { type: Type }>;

/** Maps a run outcome to the terminal event that announces it. */
export const terminalEventTypes: Readonly<Record<RunOutcome, TerminalStreamEventType>> = Object.freeze({
  completed: 'run_stop',
  failed: 'run_error',
  partial: 'run_partial',
  cancelled: 'run_cancel',
  suspended: 'run_suspend',
});

function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  if (ArrayBuffer.isView(value)) return value; // typed arrays cannot be frozen; artifacts carry bytes
  Object.freeze(value);
  for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<PropertyKey, unknown>)[key]);
  return value;
}

/** Builds a frozen stream event. */
export function createStreamEvent<Type extends StreamEventType>(
  type: Type,
  data: StreamEventDataMap[Type],
  runId: string,
): StreamEventOf<Type> {
  return deepFreeze({ type, data, runId, timestamp: Date.now() }) as unknown as StreamEventOf<Type>;
}
