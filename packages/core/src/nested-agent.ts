import type { Agent, AgentInput } from './agent.js';
import { conversationOf, latestUserText } from './agent-input.js';
import { subscribeToAbort } from './call-cancellation.js';
import {
  AgentLimitError,
  CancelledError,
  CleanupError,
  ConfigurationError,
  RunStateError,
} from './errors.js';
import { randomUUID } from './lazy-builtins.js';
import type { ModelMessage } from './model.js';
import type { Closer, PendingInterjection, RunEntrypoint, RunExecution, RunResult } from './run.js';
import { type Invocation, RunContext } from './run-context.js';
import type { Runtime } from './runtime.js';
import type { SandboxBackendV1 } from './sandbox.js';
import { type AgentStreamSource, createStreamEvent, type StreamEvent } from './stream-event.js';
import { RunTelemetryFanOut, type TelemetryV1 } from './telemetry.js';
import type { Tool } from './tool.js';
import type { ApprovalRegistry } from './tool-approval.js';
import type { EmitEvent, InScope, ToolCallBudget } from './tool-call-runner.js';
import { Usage, type UsageInit } from './usage.js';

/**
 * @internal The run's side of its nested agents: what every agent invocation of one run shares.
 * The `Run` makes one; each nested invocation reaches it through its placement.
 */
export interface NestedAgentHost {
  readonly runId: string;
  readonly runtime: Runtime;
  /** Whether the run's consumer asked for `agent_stream` events (and is streaming). */
  readonly wantsAgentEvents: boolean;
  /** Hands a nested agent's (already frozen) event to the run's stream as an `agent_stream` event. */
  deliver(source: AgentStreamSource, event: StreamEvent): void;
  /** Adds a nested model turn's usage to the run's. */
  addUsage(usage: UsageInit): void;
  /** Records the sandbox that contains a nested agent's programs (`run.sandbox`). */
  attachSandbox(sandbox: SandboxBackendV1): void;
  /**
   * Keeps a nested invocation until it ends, so the run's close stops it and waits for its
   * cleanup; returns the release. Throws `RunStateError` once the run is closing.
   */
  hold(invocation: LiveInvocation): () => void;
  /** A nested invocation could not close what it opened: the run fails when it closes. */
  noteCleanupFailure(error: unknown): void;
  /**
   * Counts an invocation that may receive the run's interjections (an assembly step's agent)
   * while it runs; returns the release. Only while exactly one is counted does it receive them.
   */
  acceptInterjections(): () => void;
  /** The interjections waiting, taken when exactly one invocation accepts them; else none. */
  takeInterjections(): PendingInterjection[];
  /** Whether interjections wait and exactly one invocation accepts them. */
  readonly hasPendingInterjections: boolean;
  /** The run's approvals: every invocation's calls that need one wait here, answered on the Run. */
  readonly approvals: ApprovalRegistry;
}

/** @internal A nested invocation as its run's close sees it. */
export interface LiveInvocation {
  /** Aborts the invocation's signal with `reason`. */
  stop(reason: unknown): void;
  /** Settles once the invocation ended and closed what it opened; never rejects. */
  readonly settled: Promise<void>;
}

/** How many more levels of agents may nest below an invocation, and whose `maxDepth` says so. */
interface DepthAllowance {
  readonly remaining: number;
  readonly agentName: string;
  readonly maxDepth: number;
}

/**
 * @internal Where an agent invocation sits among its run's agents, given to it in its
 * `RunExecution`: what the agents it runs will share with it.
 */
export interface InvocationPlacement {
  readonly host: NestedAgentHost;
  /** Which agent and where, for a nested invocation; `undefined` for the run's own agent. */
  readonly source: AgentStreamSource | undefined;
  /** The depth the agents above allow below this invocation; `undefined` with no agent above. */
  readonly depthAllowance: DepthAllowance | undefined;
  /** The tool-call budget of the invocation this one runs in; `undefined` for the run's own agent. */
  readonly parentBudget: ToolCallBudget | undefined;
  /** The telemetry plugins that observe this invocation. */
  readonly telemetry: readonly TelemetryV1[];
}

/**
 * @internal What an agent gives the run to be invoked nested: its entrypoint for a conversation
 * (with the agent's own output schema and settings) and its own telemetry plugins.
 */
export interface NestableAgent {
  entrypoint(conversation: readonly ModelMessage[], extraTools?: readonly Tool[]): RunEntrypoint;
  readonly telemetry: readonly TelemetryV1[];
}

/** What a running invocation offers the agents it runs: found from its `RunContext` (a tool's `context.run`). */
interface InvocationScope {
  readonly placement: InvocationPlacement;
  readonly runContext: RunContext;
  readonly agentName: string;
  readonly budget: ToolCallBudget;
  readonly depthAllowance: DepthAllowance;
}

const nestableAgents = new WeakMap<object, NestableAgent>();
const scopes = new WeakMap<RunContext, InvocationScope>();

/** @internal Lets `agent` run nested in a run (`defineAgent` calls it for every agent it makes). */
export function registerNestableAgent(agent: object, nestable: NestableAgent): void {
  nestableAgents.set(agent, nestable);
}

/**
 * @internal Called by an agent once its invocation has its tool-call budget: agents its tools
 * run nested (through its `runContext`) count their calls toward that budget, and may nest as
 * deep as this agent's `maxDepth` and every agent above allow.
 */
export function bindInvocationScope(
  execution: RunExecution,
  agent: { readonly agentName: string; readonly budget: ToolCallBudget; readonly maxDepth: number },
): void {
  const above = execution.placement.depthAllowance;
  const own: DepthAllowance = {
    remaining: agent.maxDepth,
    agentName: agent.agentName,
    maxDepth: agent.maxDepth,
  };
  scopes.set(execution.runContext, {
    placement: execution.placement,
    runContext: execution.runContext,
    agentName: agent.agentName,
    budget: agent.budget,
    depthAllowance: above !== undefined && above.remaining <= own.remaining ? above : own,
  });
}

/** @internal One nested agent invocation to run (see {@link runNestedAgent}). */
export interface NestedAgentRequest {
  readonly agent: Agent;
  readonly input: AgentInput;
  /**
   * The source-path segment that says where the agent runs: `tool:<toolCallId>` for an agent run
   * as a tool (an assembly's step will say `step:<node>`).
   */
  readonly placement: string | readonly string[];
  /**
   * Context for this invocation alone, over the context of the invocation it runs in, key by key
   * (an assembly's `ctx.invoke(child, input, { context })`).
   */
  readonly context?: Readonly<Record<string, unknown>>;
  /**
   * Whether `run.interject()` reaches this invocation while it is the only one of the run that
   * accepts interjections (an assembly step's agent). Default false (an agent run as a tool).
   */
  readonly receivesInterjections?: boolean;
  /**
   * Tools given to this invocation beside the agent's own, model-facing even in code mode (an
   * assembly's `transfer_to_<member>` handoff tools).
   */
  readonly tools?: readonly Tool[];
  /** Ends this invocation alone, such as the signal of the tool call that runs it (its timeout). */
  readonly signal?: AbortSignal;
  /**
   * Messages sent to the agent while it works, read at each of its model turns (a subagent's
   * `interject_subagent`). Without it nothing reaches the agent during its invocation.
   */
  readonly interjections?: InterjectionInbox;
}

/** @internal Where a nested invocation takes the messages sent to it while it works. */
export interface InterjectionInbox {
  /** Removes and returns the messages waiting for the agent's next model turn. */
  take(): PendingInterjection[];
  readonly hasPending: boolean;
}

/** @internal What a nested invocation produced. */
export interface NestedAgentResult {
  readonly result: RunResult;
  /** The tokens this invocation's model turns used (the run's usage includes them). */
  readonly usage: Usage;
  readonly invocationId: string;
}

/**
 * @internal Runs an agent nested in the invocation whose `RunContext` is `parent` (a tool's
 * `context.run`), inside that invocation's run: it shares the run's cancellation, deadline,
 * actor, context, metadata and `state`; its usage adds to the run's; its tool calls count toward
 * its own `maxToolCalls` and every agent's above it; what it opens (tool sources, code mode) is
 * closed when it ends, or by the run's close if the run ends first; its events reach the run's
 * stream as `agent_stream` events (when asked for) and its own telemetry. It has its own
 * invocation id and no session. Interjections reach it only through `request.interjections` (a
 * subagent's); the run's own go to the run's own agent.
 *
 * Throws `RunStateError` outside a running agent's invocation, `AgentLimitError` past the
 * allowed depth, `ConfigurationError` for input the agent cannot take, and whatever ended the
 * agent's invocation (after its `invocation_error`).
 */
export async function runNestedAgent(
  parent: RunContext,
  request: NestedAgentRequest,
): Promise<NestedAgentResult> {
  const scope = scopes.get(parent);
  if (scope === undefined) {
    throw new RunStateError(
      'An agent can run nested only from a tool call of a running agent: pass the context.run the tool was given.',
    );
  }
  const { agent } = request;
  const nestable = nestableAgents.get(agent);
  if (nestable === undefined) {
    throw new ConfigurationError(
      'Only an agent made by defineAgent() of this copy of @ghost/core can run nested in a run.',
      { code: 'AGENT_TOOL_INVALID' },
    );
  }
  parent.throwIfStopped();
  const allowance = scope.depthAllowance;
  const depth = (scope.placement.source?.depth ?? 0) + 1;
  if (allowance.remaining < 1) {
    throw new AgentLimitError(
      `Agent '${agent.name}' cannot run here: it would be ${depth} levels deep, and agent '${allowance.agentName}' lets agents nest at most ${allowance.maxDepth} below it (limits.maxDepth). Answer without it, or raise that limit.`,
      { maxDepth: allowance.maxDepth },
    );
  }
  const conversation = conversationOf(agent.name, request.input);
  const entrypoint = nestable.entrypoint(conversation, request.tools);
  return new NestedInvocation(scope, agent.name, nestable, request, depth, conversation).run(entrypoint);
}

/** One agent invocation nested in a run, from its start to the end of its cleanup. */
class NestedInvocation {
  readonly #scope: InvocationScope;
  readonly #host: NestedAgentHost;
  readonly #controller = new AbortController();
  readonly #runContext: RunContext;
  readonly #source: AgentStreamSource;
  readonly #placement: InvocationPlacement;
  readonly #telemetryPlugins: readonly TelemetryV1[];
  #telemetry: RunTelemetryFanOut | undefined;
  readonly #signal: AbortSignal | undefined;
  readonly #interjections: InterjectionInbox | undefined;
  readonly #receivesInterjections: boolean;
  readonly #closers: Closer[] = [];
  #isClosed = false;
  #usage = Usage.empty;

  constructor(
    scope: InvocationScope,
    agentName: string,
    nestable: NestableAgent,
    request: NestedAgentRequest,
    depth: number,
    conversation: readonly ModelMessage[],
  ) {
    this.#scope = scope;
    this.#host = scope.placement.host;
    this.#signal = request.signal;
    this.#interjections = request.interjections;
    this.#receivesInterjections = request.receivesInterjections === true;
    const above = scope.runContext.invocation;
    const invocationId = randomUUID();
    const invocation: Invocation = Object.freeze({
      invocationId,
      runId: above.runId,
      agentName,
      input: latestUserText(conversation),
      actorId: above.actorId,
      sessionId: undefined,
      context:
        request.context === undefined
          ? above.context
          : Object.freeze({ ...above.context, ...request.context }),
      metadata: above.metadata,
      deadline: above.deadline,
    });
    this.#runContext = new RunContext({
      invocation,
      signal: this.#controller.signal,
      state: scope.runContext.state,
    });
    const path = [
      ...(scope.placement.source?.path ?? []),
      ...(typeof request.placement === 'string' ? [request.placement] : request.placement),
      agentName,
      invocationId,
    ];
    this.#source = Object.freeze({ path: Object.freeze(path), agentName, invocationId, depth });
    const telemetry = unionOf(scope.placement.telemetry, nestable.telemetry);
    this.#telemetryPlugins = telemetry;
    this.#placement = {
      host: this.#host,
      source: this.#source,
      depthAllowance: { ...scope.depthAllowance, remaining: scope.depthAllowance.remaining - 1 },
      parentBudget: scope.budget,
      telemetry,
    };
  }

  async run(entrypoint: RunEntrypoint): Promise<NestedAgentResult> {
    const stop = (reason: unknown) => {
      if (!this.#controller.signal.aborted) this.#controller.abort(reason);
    };
    const unsubscribes = [subscribeToAbort(this.#scope.runContext.signal, stop)];
    if (this.#signal !== undefined) unsubscribes.push(subscribeToAbort(this.#signal, stop));
    let markSettled: () => void = () => {};
    const settled = new Promise<void>((resolve) => {
      markSettled = resolve;
    });
    let release: () => void;
    try {
      release = this.#host.hold({ stop, settled });
    } catch (error) {
      for (const unsubscribe of unsubscribes) unsubscribe();
      throw error;
    }
    const stopAccepting = this.#receivesInterjections ? this.#host.acceptInterjections() : undefined;
    this.#startTelemetry();
    try {
      const execution = this.#execution();
      const result = await this.#inScope({ kind: 'run' }, () => entrypoint.execute(execution));
      return { result, usage: this.#usage, invocationId: this.#source.invocationId };
    } finally {
      for (const unsubscribe of unsubscribes) unsubscribe();
      stopAccepting?.();
      await this.#close();
      release();
      markSettled();
    }
  }

  /**
   * Starts the plugins' observation of this invocation. Called where the agent starts, inside the
   * calling tool's telemetry scope, so a tracer parents the agent's span on that tool call's.
   */
  #startTelemetry(): void {
    if (this.#telemetryPlugins.length === 0) return;
    const { invocation } = this.#runContext;
    this.#telemetry = new RunTelemetryFanOut(this.#telemetryPlugins, {
      runId: invocation.runId,
      agentName: invocation.agentName,
      invocation,
      source: this.#source,
    });
  }

  #emit: EmitEvent = (type, data, detail = {}) => {
    const isDelivered = detail.hidden !== true && this.#host.wantsAgentEvents;
    if (this.#telemetry === undefined && !isDelivered) return;
    const event = createStreamEvent(type, data, this.#host.runId);
    this.#telemetry?.onEvent(event, detail);
    if (isDelivered) this.#host.deliver(this.#source, event);
  };

  #inScope: InScope = (scope, work) => {
    const telemetry = this.#telemetry;
    return telemetry === undefined || telemetry.isEmpty ? work() : telemetry.runInScope(scope, work);
  };

  #execution(): RunExecution {
    // A subagent reads its own inbox; an assembly's step reads the run's `interject()`.
    const inbox = this.#interjections;
    const host = this.#host;
    const receives = this.#receivesInterjections;
    return {
      runContext: this.#runContext,
      history: [],
      signal: this.#controller.signal,
      runtime: this.#host.runtime,
      emit: this.#emit,
      inScope: this.#inScope,
      placement: this.#placement,
      addUsage: (usage) => {
        this.#usage = this.#usage.add(usage);
        this.#host.addUsage(usage);
      },
      // A deadline keeps the run's own agent's text; a nested agent's answer is its tool's result.
      noteText: () => {},
      recordTranscript: () => {},
      takeInterjections: () => [...(inbox?.take() ?? []), ...(receives ? host.takeInterjections() : [])],
      get hasPendingInterjections() {
        return (inbox?.hasPending ?? false) || (receives && host.hasPendingInterjections);
      },
      register: (closer) => {
        if (this.#isClosed) {
          // Opened after the invocation ended (work that outlived it): closed at once.
          this.#closeLate(closer);
          return;
        }
        this.#closers.push(closer);
      },
      attachSandbox: (sandbox) => this.#host.attachSandbox(sandbox),
      // A nested agent's calls wait in process: only the run's own agent suspends.
      approvalMode: 'wait',
      resume: undefined,
      savePause: () => Promise.reject(new RunStateError('An agent run nested cannot save a pause.')),
      suspend: () => {
        throw new RunStateError('An agent run nested cannot suspend.');
      },
    };
  }

  /** Closes what the invocation opened, in reverse order; a failure fails the run when it closes. */
  async #close(): Promise<void> {
    this.#isClosed = true;
    if (!this.#controller.signal.aborted) {
      // Work the agent left behind (a tool that ignored its signal) sees that the invocation ended.
      this.#controller.abort(new CancelledError(`Agent '${this.#source.agentName}' finished.`));
    }
    const closers = this.#closers.splice(0).reverse();
    for (const closer of closers) {
      try {
        await closer();
      } catch (error) {
        this.#host.noteCleanupFailure(asCleanupError(error, this.#source.agentName));
      }
    }
  }

  #closeLate(closer: Closer): void {
    Promise.resolve()
      .then(closer)
      .catch((error: unknown) =>
        this.#host.noteCleanupFailure(asCleanupError(error, this.#source.agentName)),
      );
  }
}

function asCleanupError(error: unknown, agentName: string): unknown {
  if (CleanupError.isInstance(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new CleanupError(`Agent '${agentName}', run nested, could not close what it opened: ${message}`, {
    cause: error,
  });
}

function unionOf(first: readonly TelemetryV1[], second: readonly TelemetryV1[]): readonly TelemetryV1[] {
  if (second.length === 0) return first;
  if (first.length === 0) return second;
  return [...new Set([...first, ...second])];
}
