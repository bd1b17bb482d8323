import {
  AgentInterjectionError,
  ApprovalError,
  CancelledError,
  CleanupError,
  ConfigurationError,
  DeadlineExceededError,
  PausedRunError,
  RunResumeConflictError,
  RunStateError,
} from './errors.js';
import { EventQueue } from './event-queue.js';
import { randomUUID } from './lazy-builtins.js';
import type { ModelMessage } from './model.js';
import type { InvocationPlacement, LiveInvocation, NestedAgentHost } from './nested-agent.js';
import { decodePausedRun, encodePausedRun, type PausedCall, type PausedRun } from './paused-run.js';
import type { ResumeDecision, ResumePlan } from './resume-paused-calls.js';
import { type Invocation, RunContext, stopReason } from './run-context.js';
import type { RunOutcome } from './run-outcome.js';
import {
  asSessionError,
  type CheckedSessionOptions,
  historyWindow,
  OpenedRunSession,
  type RunSession,
  turnToWrite,
} from './run-session.js';
import type { Runtime } from './runtime.js';
import type { SandboxBackendV1 } from './sandbox.js';
import { SessionBusyError } from './session-errors.js';
import type { SessionStoreV1, SessionTurnOutcome } from './session-store.js';
import {
  type AgentStreamSource,
  createStreamEvent,
  type ErrorSummary,
  type NestedStreamEvent,
  type StreamEvent,
  type StreamEventDataMap,
  type StreamEventType,
  terminalEventTypes,
} from './stream-event.js';
import { RunTelemetryFanOut, type TelemetryEventDetail, type TelemetryV1 } from './telemetry.js';
import { ApprovalRegistry, approvalsOf, type PendingApproval } from './tool-approval.js';
import { type EmitEvent, type InScope, summarizeError } from './tool-call-runner.js';
import { Usage, type UsageInit } from './usage.js';
import type { Workspace } from './workspace.js';

/** What a finished entrypoint produced. */
export interface RunResult {
  /** The final text of the answer. */
  readonly text: string;
  /** How many model turns the run took. */
  readonly turns: number;
  /** How many tool calls the run made, those of the agents it ran nested (`agent.asTool()`) included. */
  readonly toolCalls: number;
  /** The whole conversation, including tool calls and results. */
  readonly messages: readonly ModelMessage[];
  /** The answer parsed and validated against the run's `output` schema, when it had one. */
  readonly output?: unknown;
  /** For an assembly's run (a Workflow, Swarm or Graph): the steps it took, in the order they ended. */
  readonly steps?: readonly RunStep[];
}

/** One step an assembly took (its trajectory is `run.result.steps`). */
export interface RunStep {
  /** Unique in the run; the step's `assembly_step_*` events carry it. */
  readonly stepId: string;
  /** The assembly the step belongs to. */
  readonly assemblyName: string;
  /** The graph node, swarm member or invoked assembly's name. */
  readonly step: string;
  /** The agent (or nested assembly) it ran. */
  readonly agentName: string;
  /** Where it ran, as its events say. */
  readonly path: readonly string[];
  /** How many attempts it took. */
  readonly attempts: number;
  readonly outcome: 'completed' | 'failed';
  /** The text the step was asked. */
  readonly input: string;
  /** Its agent's answer; empty when it failed. */
  readonly response: string;
  /** Why it failed, when it did. */
  readonly error?: ErrorSummary;
  readonly durationMs: number;
}

/** Event types only the run itself emits: a nested agent's events never carry them. */
const runOnlyEventTypes: ReadonlySet<string> = new Set([
  'agent_stream',
  'run_start',
  'run_resume',
  ...Object.values(terminalEventTypes),
]);

/** Something with a `close()` that `run.register` can own. */
export interface Closeable {
  close(): unknown;
}

/** A message waiting to reach the active entrypoint, and the promise its sender awaits. */
export interface PendingInterjection {
  readonly message: string;
  resolve(response: string): void;
  reject(error: unknown): void;
}

/**
 * What an entrypoint (an agent) gets while it runs: the way to emit events, the run's context and
 * signal, and the interjections sent to it.
 */
export interface RunExecution {
  readonly runContext: RunContext;
  /**
   * The history the run continues, from its session (a window of the newest messages, starting at a
   * user message); empty without a session. The entrypoint puts it before its input.
   */
  readonly history: readonly ModelMessage[];
  readonly signal: AbortSignal;
  readonly runtime: Runtime;
  readonly emit: EmitEvent;
  /** Runs work with a telemetry scope current (a model turn, a tool call). */
  readonly inScope: InScope;
  /** Adds a turn's usage to the run's total. */
  addUsage(usage: UsageInit): void;
  /** Records text as it streams, so a deadline can keep what was produced so far. */
  noteText(text: string): void;
  /** Hands the run the live conversation, so `run.messages` holds it whatever the outcome. */
  recordTranscript(messages: readonly ModelMessage[]): void;
  /** Removes and returns the interjections waiting for delivery. */
  takeInterjections(): PendingInterjection[];
  readonly hasPendingInterjections: boolean;
  /** Adds a closer to the run's cleanup, as `run.register` does. */
  register(closer: Closer): void;
  /** Records the sandbox backend that contains the run's programs (`run.sandbox`). */
  attachSandbox(sandbox: SandboxBackendV1): void;
  /** Where this invocation sits among the run's agents: what agents it runs nested share with it. */
  readonly placement: InvocationPlacement;
  /**
   * How the run's own agent's calls that need approval wait: in process (`wait`), or by ending the
   * run as `suspended` with its pause saved (`suspend`). Always `wait` for an agent run nested.
   */
  readonly approvalMode: 'wait' | 'suspend';
  /** With `agent.resume()`: the pause the run continues and the decisions it was given. */
  readonly resume: ResumePlan | undefined;
  /** Saves the run's pause now: the conversation so far, and the calls without a result. */
  savePause(progress: PauseProgress): Promise<void>;
  /**
   * Ends the run as `suspended` once the entrypoint returns, with these calls waiting; the run
   * saves its pause before anything announces it.
   */
  suspend(progress: PauseProgress): void;
}

/** Where a pausing run stands: the calls without a result, and the turns and tool calls taken. */
export interface PauseProgress {
  readonly calls: readonly PausedCall[];
  readonly turns: number;
  readonly toolCalls: number;
}

/** The work a run executes: one agent invocation, or an assembly of agents. */
export interface RunEntrypoint {
  /** The name of the agent (or assembly) the run executes. */
  readonly agentName: string;
  /**
   * `agent` (the default): interjections reach the entrypoint itself. `assembly`: the entrypoint
   * runs agents nested as its steps, and an interjection reaches a step's agent while it is the
   * only one running.
   */
  readonly kind?: 'agent' | 'assembly';
  /** How many messages the run was asked (its input): the first ones of its turn. */
  readonly inputLength: number;
  execute(execution: RunExecution): Promise<RunResult>;
}

/** @internal How an agent builds a run. */
export interface RunInit {
  readonly invocation: Invocation;
  readonly runtime: Runtime;
  readonly entrypoint: RunEntrypoint;
  readonly signal?: AbortSignal | undefined;
  /** The telemetry plugins that observe the run (the runtime's, then the agent's). */
  readonly telemetry?: readonly TelemetryV1[];
  /** The session the run continues, and the store that keeps it. */
  readonly session?: { readonly store: SessionStoreV1; readonly options: CheckedSessionOptions } | undefined;
  /** Stream the events of agents nested in the run as `agent_stream` events. */
  readonly includeAgentEvents?: boolean;
  /** How the run's own agent's calls that need approval wait (default `wait`); `suspend` needs a session. */
  readonly approvals?: 'wait' | 'suspend';
  /** With `agent.resume()`: continue the session's paused run with these decisions, or discard it. */
  readonly resume?: { readonly decisions: ReadonlyMap<string, ResumeDecision>; readonly discard: boolean };
}

/** A finished run's event stream, plus the run itself. */
export interface RunStream<Output = unknown> extends AsyncIterable<StreamEvent> {
  /** Resolves to the finished run once its terminal event has been produced. */
  readonly run: Promise<Run<Output>>;
}

/** A cleanup function `run.register` can own. */
export type Closer = () => unknown;

/**
 * One top-level execution from start to finish: its response, outcome, usage, error and the
 * resources it owns. `agent.ask()` returns a finished Run; `agent.streamAsk()` streams its events.
 * A Run executes once.
 *
 * @example
 * ```ts
 * const run = await agent.ask('Why is transfer 481 pending?');
 * if (run.completed) console.log(run.response);
 * else console.error(run.outcome, run.error?.message);
 * ```
 *
 * `Output` is the type of {@link Run.output}: the value of the `output` schema the run was asked
 * for, `unknown` when it was asked for none.
 */
export class Run<Output = unknown> {
  /** Unique id of this top-level operation. */
  readonly operationId: string;
  /** The runtime that built and executes this run. */
  readonly runtime: Runtime;
  /** The run's private temporary directory, created on first use and removed when the run closes. */
  readonly workspace: Workspace;

  #invocation: Invocation;
  readonly #entrypoint: RunEntrypoint;
  readonly #sessionPlan: RunInit['session'];
  #session: OpenedRunSession | undefined;
  #history: readonly ModelMessage[] = [];
  readonly #telemetryPlugins: readonly TelemetryV1[];
  #telemetry: RunTelemetryFanOut | undefined;
  readonly #callerSignal: AbortSignal | undefined;
  readonly #controller = new AbortController();
  #runContext: RunContext;
  readonly #closers: Closer[] = [];
  readonly #onceKeys = new Map<string, { isDone: boolean; tail: Promise<unknown> }>();
  #pendingInterjections: PendingInterjection[] = [];
  #queue: EventQueue<StreamEvent> | undefined;
  #hasStarted = false;
  #isActive = false;
  #closing: Promise<void> | undefined;
  #outcome: RunOutcome | undefined;
  #response = '';
  #latestText = '';
  #result: RunResult | undefined;
  #transcript: readonly ModelMessage[] = [];
  #usage = Usage.empty;
  #error: Error | undefined;
  #sandbox: SandboxBackendV1 | undefined;
  readonly #includeAgentEvents: boolean;
  readonly #liveInvocations = new Set<LiveInvocation>();
  #isClosingNested = false;
  #interjectableAgents = 0;
  readonly #nestedCleanupErrors: unknown[] = [];
  readonly #approvals = new ApprovalRegistry((type, data) => this.#emit(type, data));
  readonly #approvalMode: 'wait' | 'suspend';
  readonly #resumeRequest: RunInit['resume'];
  #resumePlan: ResumePlan | undefined;
  #suspension: PauseProgress | undefined;
  #suspendedApprovals: readonly PendingApproval[] = [];
  #pauseId: string | undefined;

  /** @internal Runs are made by `agent.createRun()`, `ask()` and `streamAsk()`. */
  constructor(init: RunInit) {
    this.#invocation = init.invocation;
    this.operationId = init.invocation.runId;
    this.runtime = init.runtime;
    this.#entrypoint = init.entrypoint;
    this.#sessionPlan = init.session;
    this.#telemetryPlugins = init.telemetry ?? [];
    this.#callerSignal = init.signal;
    this.#runContext = new RunContext({ invocation: init.invocation, signal: this.#controller.signal });
    this.#includeAgentEvents = init.includeAgentEvents === true;
    this.#approvalMode = init.approvals ?? 'wait';
    this.#resumeRequest = init.resume;
    this.workspace = init.runtime.createWorkspace();
    this.register(this.workspace);
  }

  /**
   * The normalised request this run carries. With a session, once the run has started its
   * `context` holds the session's state under the context given to `ask`.
   */
  get invocation(): Invocation {
    return this.#invocation;
  }
  /** How the run ended; `undefined` until it has. */
  get outcome(): RunOutcome | undefined {
    return this.#outcome;
  }
  /** True after successful completion. */
  get completed(): boolean {
    return this.#outcome === 'completed';
  }
  /** True after execution or cleanup failed. */
  get failed(): boolean {
    return this.#outcome === 'failed';
  }
  /** True when the deadline ended the run; `response` keeps the text produced so far. */
  get partial(): boolean {
    return this.#outcome === 'partial';
  }
  /** True when cancellation stopped the run; `response` is empty. */
  get cancelled(): boolean {
    return this.#outcome === 'cancelled';
  }
  /**
   * True when the run paused for a person's decision (`approvals: 'suspend'`): its pause is saved
   * in its session, `pendingApprovals` lists what waits, and `agent.resume()` continues it.
   */
  get suspended(): boolean {
    return this.#outcome === 'suspended';
  }
  /** The caller-facing final text, or the partial text kept at a deadline. */
  get response(): string {
    return this.#response;
  }
  /** What the entrypoint produced, when it completed. */
  get result(): RunResult | undefined {
    return this.#result;
  }
  /**
   * The whole conversation: the session's history window (with a session), the input (a message, or
   * the messages passed to `ask`), then every model answer, tool call and tool result, including
   * code mode's `exec` calls and their results. Without a session, continue the conversation with
   * `agent.ask([...run.messages, { role: 'user', content }])`. Kept whatever the outcome; empty
   * before the run starts.
   */
  get messages(): readonly ModelMessage[] {
    return Object.isFrozen(this.#transcript) ? this.#transcript : [...this.#transcript];
  }
  /**
   * The final answer parsed and validated against the `output` schema given to `defineAgent` or
   * `ask`; `undefined` without one, or when the run did not complete.
   */
  get output(): Output | undefined {
    return this.#result?.output as Output | undefined;
  }
  /** Token usage accumulated over every model turn of the run. */
  get usage(): Usage {
    return this.#usage;
  }
  /** The error behind a failed, partial or cancelled outcome. */
  get error(): Error | undefined {
    return this.#error;
  }
  /** The sandbox backend that contains this run's programs, when code mode opened one. */
  get sandbox(): SandboxBackendV1 | undefined {
    return this.#sandbox;
  }
  /**
   * The session opened for this invocation (`ask(input, { session })` with the runtime's
   * `sessionStore`): its id, actor, state and history. `undefined` without one, and until the run
   * has opened it.
   */
  get session(): RunSession | undefined {
    return this.#session;
  }
  /** The run's cancellation signal: aborts on cancel and at the deadline. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /**
   * Adds a resource (anything with `close()`) or a closer function to the run's cleanup, which
   * runs in reverse order when the run ends. Returns what it was given.
   */
  register<Resource extends Closeable | Closer>(resource: Resource): Resource {
    if (this.#closing) throw new RunStateError('This run has closed; register resources before it ends.');
    if (typeof resource === 'function') {
      this.#closers.push(resource);
    } else if (resource !== null && typeof resource === 'object' && typeof resource.close === 'function') {
      this.#closers.push(() => resource.close());
    } else {
      throw new ConfigurationError(
        'run.register() takes an object with a close() method or a closer function.',
      );
    }
    return resource;
  }

  /**
   * Closes registered resources in reverse order, after stopping the agents still running nested
   * in the run and waiting for their own cleanup. Idempotent: later calls wait for the first.
   * It tries every closer, then throws the first `CleanupError`, or else the first error.
   */
  close(): Promise<void> {
    this.#closing ??= this.#closeAll();
    return this.#closing;
  }

  async #closeAll(): Promise<void> {
    const errors: unknown[] = [];
    await this.#closeNestedInvocations();
    errors.push(...this.#nestedCleanupErrors);
    for (const closer of this.#closers.reverse()) {
      try {
        await closer();
      } catch (error) {
        errors.push(error);
      }
    }
    this.#closers.length = 0;
    const first = errors.find((error) => CleanupError.isInstance(error)) ?? errors[0];
    if (errors.length > 0) throw first;
  }

  /**
   * Performs `work` at most once successfully for `key` during this run. Concurrent callers are
   * serialised; the caller that performs it receives its value, later callers `undefined`. If
   * `work` throws, the key is not recorded and a later call may try again.
   */
  async once<Value>(key: string, work: () => Value | Promise<Value>): Promise<Value | undefined> {
    let entry = this.#onceKeys.get(key);
    if (!entry) {
      entry = { isDone: false, tail: Promise.resolve() };
      this.#onceKeys.set(key, entry);
    }
    const current = entry;
    const attempt = current.tail.then(async () => {
      if (current.isDone) return undefined;
      const value = await work();
      current.isDone = true;
      return value;
    });
    current.tail = attempt.catch(() => {});
    return attempt;
  }

  /** Creates a `RunContext` with this run's invocation, signal and deadline. */
  context(
    options: { state?: Record<string, unknown>; metadata?: Readonly<Record<string, unknown>> } = {},
  ): RunContext {
    return new RunContext({
      invocation: this.invocation,
      signal: this.#controller.signal,
      session: this.#session,
      ...options,
    });
  }

  /**
   * Sends a message to the run's agent while it works, and resolves with the text of the model
   * turn that received it. Rejects with `AgentInterjectionError` before the run starts, after it
   * ends, or when it ends before the message was delivered.
   *
   * The run's own agent is its one entrypoint, and the only agent an interjection reaches. An
   * agent it runs nested (a tool made with `agent.asTool()`) works inside one of its tool calls
   * and never receives one: a message sent while a nested agent works waits for the run's agent,
   * which reads it on its next model turn, after that tool call has returned.
   */
  interject(message: string): Promise<string> {
    if (!this.#isActive) {
      return Promise.reject(
        new AgentInterjectionError(
          this.#hasStarted
            ? 'This run has finished; start a new run to send another message.'
            : 'This run has not started; interject while it is running.',
        ),
      );
    }
    if (typeof message !== 'string' || message.length === 0) {
      return Promise.reject(new ConfigurationError('run.interject() takes a non-empty message string.'));
    }
    if (this.#entrypoint.kind === 'assembly' && this.#interjectableAgents !== 1) {
      return Promise.reject(
        new AgentInterjectionError(
          `An interjection reaches an assembly's agent only while exactly one runs; ${this.#interjectableAgents} agents are running now. Try again when one is.`,
        ),
      );
    }
    return new Promise<string>((resolve, reject) => {
      this.#pendingInterjections.push({ message, resolve, reject });
    });
  }

  /**
   * The tool calls waiting for a person's decision now (tools with `needsApproval`), oldest
   * first, the run's own agent's and those of agents it runs nested: a frozen list, replaced when
   * one is added or ends. Each also came as an `approval_requested` event.
   */
  get pendingApprovals(): readonly PendingApproval[] {
    return this.#outcome === 'suspended' ? this.#suspendedApprovals : this.#approvals.pending;
  }

  /**
   * Approves a pending tool call: it runs (its own `timeoutMs` starts now). Answer in any order;
   * takes effect at once and returns nothing. Throws `ApprovalError` (`APPROVAL_UNKNOWN`) when
   * `approvalId` is not pending: never requested in this run, already answered, timed out, or
   * the run ended.
   *
   * @example
   * ```ts
   * for await (const event of stream) {
   *   if (event.type === 'approval_requested') run.approve(event.data.approvalId);
   * }
   * ```
   */
  approve(approvalId: string): void {
    this.#refuseAnswerWhenSuspended(approvalId, 'approve');
    this.#approvals.approve(approvalId);
  }

  /**
   * Rejects a pending tool call: it does not run, and the model reads that a person rejected it,
   * with `message` when given. Returns nothing; throws `ApprovalError` (`APPROVAL_UNKNOWN`) as
   * {@link Run.approve} does.
   */
  reject(approvalId: string, options: { readonly message?: string } = {}): void {
    const message = options?.message;
    if (message !== undefined && typeof message !== 'string') {
      throw new ConfigurationError('run.reject() takes { message } as a string.');
    }
    this.#refuseAnswerWhenSuspended(approvalId, 'reject');
    this.#approvals.reject(approvalId, message);
  }

  /** A suspended run's approvals are answered by `agent.resume()`, in any process. */
  #refuseAnswerWhenSuspended(approvalId: string, method: 'approve' | 'reject'): void {
    if (this.#outcome !== 'suspended') return;
    throw new ApprovalError(
      `run.${method}(): this run suspended and saved its pause in its session; answer its approvals with agent.resume({ session, decisions: { [approvalId]: ... } }).`,
      { code: 'APPROVAL_UNKNOWN', ...(typeof approvalId === 'string' ? { approvalId } : {}) },
    );
  }

  /** Executes the run to its end and returns it. A second execution throws `RunStateError`. */
  async execute(): Promise<Run<Output>> {
    this.#claimExecution();
    await this.#run();
    return this;
  }

  /**
   * Executes the run, yielding its events as they happen; the last event is always the terminal
   * one. Stopping the iteration early cancels the run. A second execution throws `RunStateError`.
   */
  stream(): RunStream<Output> {
    this.#claimExecution();
    const queue = new EventQueue<StreamEvent>(() => {
      this.#controller.abort(
        new CancelledError('The event stream consumer stopped reading, so the run was cancelled.'),
      );
    });
    this.#queue = queue;
    const finished = this.#run().then(() => this);
    finished.catch(() => {}); // the failure is reported to whoever awaits `run`; never unhandled
    return { run: finished, [Symbol.asyncIterator]: () => queue[Symbol.asyncIterator]() };
  }

  #claimExecution(): void {
    if (this.#hasStarted) throw new RunStateError('This run has already executed; a run executes only once.');
    this.#hasStarted = true;
  }

  #emit: EmitEvent = <Type extends StreamEventType>(
    type: Type,
    data: StreamEventDataMap[Type],
    detail: TelemetryEventDetail = {},
  ) => {
    const event = createStreamEvent(type, data, this.operationId);
    if (detail.hidden !== true) this.#queue?.push(event);
    this.#telemetry?.onEvent(event, detail);
  };

  #inScope: InScope = (scope, work) => {
    const telemetry = this.#telemetry;
    return telemetry === undefined || telemetry.isEmpty ? work() : telemetry.runInScope(scope, work);
  };

  async #run(): Promise<void> {
    const { invocation } = this;
    if (this.#telemetryPlugins.length > 0) {
      this.#telemetry = new RunTelemetryFanOut(this.#telemetryPlugins, {
        runId: invocation.runId,
        agentName: invocation.agentName,
        invocation,
      });
    }
    this.#emit('run_start', {
      runId: invocation.runId,
      operationId: this.operationId,
      agentName: invocation.agentName,
    });
    const stopTimers = this.#watchStopSignals();
    this.#isActive = true;
    try {
      this.#result = await this.#inScope({ kind: 'run' }, async () => {
        if (this.#sessionPlan !== undefined) await this.#openSession(this.#sessionPlan);
        if (this.#resumeRequest?.discard === true) return this.#discardPause();
        return this.#entrypoint.execute(this.#execution());
      });
      if (this.#suspension === undefined) {
        this.#response = this.#result.text;
        this.#outcome = 'completed';
      } else {
        await this.#savePause(this.#suspension);
        this.#announcePause(this.#suspension);
        this.#outcome = 'suspended';
      }
    } catch (error) {
      this.#settleFailure(error);
    } finally {
      this.#isActive = false;
      stopTimers();
      this.#approvals.cancelAll();
      this.#rejectPendingInterjections();
      this.#transcript = Object.freeze([...this.#transcript]);
    }
    await this.#writeTurn();
    let cleanupError: unknown;
    try {
      await this.close();
    } catch (error) {
      cleanupError = error;
      this.#outcome = 'failed';
      this.#response = '';
      this.#error = error instanceof Error ? error : new CleanupError(String(error));
    }
    this.#emitTerminal(cleanupError !== undefined);
    this.#queue?.close();
    if (cleanupError !== undefined) throw cleanupError;
  }

  /**
   * Opens the session: waits for its lock (the run's signal ends the wait), loads the history window
   * and puts the session's state under the invocation's context. The lock is released when the run
   * closes, after its turn is written.
   */
  async #openSession(plan: NonNullable<RunInit['session']>): Promise<void> {
    const { store, options } = plan;
    let handle: Awaited<ReturnType<SessionStoreV1['open']>>;
    try {
      handle = await store.open({
        id: options.id,
        actor: options.actor,
        lockTimeoutMs: options.lockTimeoutMs,
        signal: this.#controller.signal,
      });
    } catch (error) {
      if (this.#controller.signal.aborted) throw stopReason(this.#controller.signal);
      throw asSessionError(error, store.name, options.id);
    }
    const session = new OpenedRunSession(store, handle);
    this.#session = session;
    this.register(() => session.release());
    this.#readPause(handle.pause, options.id);
    const limit = options.historyLimit ?? store.limits.maxMessages;
    if (limit > 0 && handle.messageCount > 0) {
      let records: Awaited<ReturnType<typeof handle.history>>;
      try {
        records = await handle.history({ limit });
      } catch (error) {
        throw asSessionError(error, store.name, options.id);
      }
      this.#history = historyWindow(session, records);
    }
    const invocation = this.#invocation;
    this.#invocation = Object.freeze({
      ...invocation,
      context: Object.freeze({ ...session.state, ...invocation.context }),
    });
    this.#runContext = new RunContext({
      invocation: this.#invocation,
      signal: this.#controller.signal,
      session,
    });
  }

  /**
   * Writes the run's turn to its session in one write keyed by the run id (see `turnToWrite` for
   * what a run that ended early keeps). A failed write fails the run; nothing is written half-way.
   */
  async #writeTurn(): Promise<void> {
    const session = this.#session;
    if (session === undefined || this.#outcome === 'suspended') return;
    const outcome: SessionTurnOutcome = this.#outcome ?? 'failed';
    const resumed = this.#resumePlan?.paused;
    // A resume that did not complete leaves the pause as it last saved it: resume it again.
    if (resumed !== undefined && outcome !== 'completed') return;
    try {
      const turn = turnToWrite(
        this.#transcript.slice(this.#history.length),
        resumed?.inputLength ?? this.#entrypoint.inputLength,
        outcome,
      );
      if (turn.length === 0 && resumed === undefined) return;
      await session.write({
        operationId: this.operationId,
        messages: turn,
        state: session.stateToSave(),
        outcome,
        ...(resumed === undefined ? {} : { pause: null }),
      });
    } catch (error) {
      this.#outcome = 'failed';
      this.#response = '';
      this.#error = error instanceof Error ? error : new Error(String(error));
    }
  }

  #settleFailure(error: unknown): void {
    const signal = this.#controller.signal;
    const reason = signal.aborted ? stopReason(signal) : error;
    if (DeadlineExceededError.isInstance(reason)) {
      this.#outcome = 'partial';
      this.#response = this.#latestText;
    } else if (CancelledError.isInstance(reason)) {
      this.#outcome = 'cancelled';
      this.#response = '';
    } else {
      this.#outcome = 'failed';
      this.#response = '';
    }
    this.#error = reason instanceof Error ? reason : new Error(String(reason));
  }

  #emitTerminal(cleanupFailed: boolean): void {
    const usage = this.#usage;
    const outcome = this.#outcome ?? 'failed';
    const error = summarizeError(this.#error);
    switch (terminalEventTypes[outcome]) {
      case 'run_stop':
        this.#emit('run_stop', { outcome: 'completed', response: this.#response, usage });
        break;
      case 'run_partial':
        this.#emit('run_partial', { outcome: 'partial', response: this.#response, error, usage });
        break;
      case 'run_cancel':
        this.#emit('run_cancel', { outcome: 'cancelled', error, usage });
        break;
      case 'run_error':
        this.#emit('run_error', { outcome: 'failed', error, cleanupFailed, usage });
        break;
      case 'run_suspend':
        this.#emit('run_suspend', {
          outcome: 'suspended',
          pendingApprovals: this.#suspendedApprovals,
          pauseId: this.#pauseId ?? '',
          usage,
        });
        break;
    }
  }

  /**
   * Reads what the session keeps of a paused run when it opens: a new run refuses a session that
   * waits for a person; a resume claims the pause it continues (checked before anything runs).
   */
  #readPause(pause: string | undefined, sessionId: string): void {
    const request = this.#resumeRequest;
    if (request === undefined) {
      if (pause === undefined) return;
      throw new SessionBusyError(
        `Session '${sessionId}' keeps a run paused for a person's approval; a new run cannot start on it. Continue that run with agent.resume({ session, decisions }), or discard it with agent.resume({ session, discard: true }).`,
        { sessionId, reason: 'paused', store: this.#sessionPlan?.store.name ?? 'session' },
      );
    }
    if (pause === undefined) {
      throw new RunResumeConflictError(
        `Session '${sessionId}' keeps no paused run: another resume completed it, or no run paused in it. Nothing ran.`,
        { sessionId },
      );
    }
    if (request.discard) return;
    const paused = decodePausedRun(pause, sessionId);
    if (paused.agentName !== this.#entrypoint.agentName) {
      throw new PausedRunError(
        `The run paused in session '${sessionId}' belongs to agent '${paused.agentName}', not '${this.#entrypoint.agentName}'. Nothing ran. Resume it with agent '${paused.agentName}'.`,
        { code: 'PAUSED_RUN_INCOMPATIBLE', sessionId, missing: [`agent '${paused.agentName}'`] },
      );
    }
    const pending = new Set(
      paused.calls.filter((call) => call.status === 'pending').map((call) => call.approvalId),
    );
    const stale = [...request.decisions.keys()].filter((approvalId) => !pending.has(approvalId));
    if (stale.length > 0) {
      throw new RunResumeConflictError(
        `The paused run in session '${sessionId}' has no pending approval ${stale.map((id) => `'${id}'`).join(', ')}: another resume decided it, or it was never part of this pause. Nothing ran.`,
        { sessionId, approvalIds: stale },
      );
    }
    this.#resumePlan = { paused, decisions: request.decisions };
    const event = createStreamEvent(
      'run_resume',
      {
        firstRunId: paused.firstRunId,
        pausedRunId: paused.savedByRunId,
        pauseId: paused.pauseId,
        decided: Object.freeze([...request.decisions.keys()]),
      },
      this.operationId,
    );
    this.#queue?.push(event);
    // Each telemetry plugin gets back what it kept with the pause, to link the two runs.
    this.#telemetry?.onResume(event, paused.telemetry ?? {});
  }

  /** Saves the run's pause in its session: the turn so far and the calls without a result. */
  async #savePause(progress: PauseProgress): Promise<void> {
    const session = this.#session;
    if (session === undefined) {
      throw new RunStateError('Only a run with a session can save a pause.');
    }
    const resumed = this.#resumePlan?.paused;
    const paused: PausedRun = {
      pauseId: randomUUID(),
      firstRunId: resumed?.firstRunId ?? this.operationId,
      savedByRunId: this.operationId,
      agentName: this.#entrypoint.agentName,
      savedAt: new Date().toISOString(),
      turn: this.#transcript.slice(this.#history.length),
      inputLength: resumed?.inputLength ?? this.#entrypoint.inputLength,
      turns: progress.turns,
      toolCalls: progress.toolCalls,
      calls: progress.calls,
      ...telemetryOf(this.#telemetry),
    };
    await session.write({
      operationId: `pause:${paused.pauseId}`,
      messages: [],
      state: session.stateToSave(),
      pause: encodePausedRun(paused),
    });
    this.#pauseId = paused.pauseId;
  }

  /** After the pause is saved: the approvals the run waits for, as events and `pendingApprovals`. */
  #announcePause(progress: PauseProgress): void {
    this.#suspendedApprovals = approvalsOf(progress.calls, this.#entrypoint.agentName);
    for (const pending of this.#suspendedApprovals) this.#emit('approval_requested', pending);
  }

  /** `agent.resume({ session, discard: true })`: removes the pause; nothing runs, nothing else is written. */
  async #discardPause(): Promise<RunResult> {
    const session = this.#session;
    if (session !== undefined) {
      await session.write({ operationId: `discard:${this.operationId}`, messages: [], pause: null });
    }
    return { text: '', turns: 0, toolCalls: 0, messages: [] };
  }

  /** Links the caller's signal and the deadline to the run's controller; returns the undo. */
  #watchStopSignals(): () => void {
    const controller = this.#controller;
    const caller = this.#callerSignal;
    const onCallerAbort = () =>
      controller.abort(new CancelledError('The run was cancelled.', { cause: caller?.reason }));
    if (caller?.aborted) onCallerAbort();
    else caller?.addEventListener('abort', onCallerAbort, { once: true });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const { deadline } = this.invocation;
    if (deadline !== undefined) {
      const onDeadline = () => controller.abort(new DeadlineExceededError('The run reached its deadline.'));
      const remaining = deadline - Date.now();
      if (remaining <= 0) onDeadline();
      else timer = setTimeout(onDeadline, remaining);
    }
    return () => {
      clearTimeout(timer);
      caller?.removeEventListener('abort', onCallerAbort);
    };
  }

  #execution(): RunExecution {
    const run = this;
    return {
      runContext: this.#runContext,
      history: this.#history,
      signal: this.#controller.signal,
      runtime: this.runtime,
      emit: this.#emit,
      inScope: this.#inScope,
      addUsage: (usage) => {
        this.#usage = this.#usage.add(usage);
      },
      noteText: (text) => {
        if (text.length > 0) this.#latestText = text;
      },
      recordTranscript: (messages) => {
        this.#transcript = messages;
      },
      takeInterjections: () => this.#takeAll(),
      get hasPendingInterjections() {
        return run.#pendingInterjections.length > 0;
      },
      register: (closer) => {
        this.register(closer);
      },
      attachSandbox: (sandbox) => {
        this.#sandbox = sandbox;
      },
      placement: {
        host: this.#nestedAgentHost(),
        source: undefined,
        depthAllowance: undefined,
        parentBudget: undefined,
        telemetry: this.#telemetryPlugins,
      },
      approvalMode: this.#approvalMode,
      resume: this.#resumePlan,
      savePause: (progress) => this.#savePause(progress),
      suspend: (progress) => {
        this.#suspension = progress;
      },
    };
  }

  /** The run's side of the agents nested in it (see `nested-agent.ts`). */
  #nestedAgentHost(): NestedAgentHost {
    const run = this;
    return {
      runId: this.operationId,
      runtime: this.runtime,
      get wantsAgentEvents() {
        return run.#includeAgentEvents && run.#queue !== undefined;
      },
      deliver: (source, event) => this.#deliverAgentEvent(source, event),
      addUsage: (usage) => {
        this.#usage = this.#usage.add(usage);
      },
      attachSandbox: (sandbox) => {
        this.#sandbox = sandbox;
      },
      hold: (invocation) => {
        if (this.#isClosingNested) {
          throw new RunStateError('This run has ended; an agent cannot start in it any more.');
        }
        this.#liveInvocations.add(invocation);
        return () => this.#liveInvocations.delete(invocation);
      },
      noteCleanupFailure: (error) => {
        this.#nestedCleanupErrors.push(error);
      },
      acceptInterjections: () => {
        this.#interjectableAgents += 1;
        let isReleased = false;
        return () => {
          if (isReleased) return;
          isReleased = true;
          this.#interjectableAgents -= 1;
        };
      },
      takeInterjections: () => (this.#interjectableAgents === 1 ? this.#takeAll() : []),
      get hasPendingInterjections() {
        return run.#interjectableAgents === 1 && run.#pendingInterjections.length > 0;
      },
      approvals: this.#approvals,
    };
  }

  /** A nested agent's event, wrapped for the stream; never wrapped twice, whatever the depth. */
  #deliverAgentEvent(source: AgentStreamSource, event: StreamEvent): void {
    if (runOnlyEventTypes.has(event.type)) return;
    const nested = event as NestedStreamEvent;
    this.#queue?.push(createStreamEvent('agent_stream', { source, event: nested }, this.operationId));
  }

  /**
   * Stops the agents still running nested in the run (work a cancelled tool call left behind)
   * and waits until each has closed what it opened. No agent can start in the run after this.
   */
  async #closeNestedInvocations(): Promise<void> {
    this.#isClosingNested = true;
    const live = [...this.#liveInvocations];
    if (live.length === 0) return;
    const reason = new CancelledError('The run ended while this agent was still running.');
    for (const invocation of live) invocation.stop(reason);
    await Promise.all(live.map((invocation) => invocation.settled));
  }

  #rejectPendingInterjections(): void {
    for (const pending of this.#takeAll()) {
      pending.reject(new AgentInterjectionError('The run ended before the interjection reached the agent.'));
    }
  }

  #takeAll(): PendingInterjection[] {
    const taken = this.#pendingInterjections;
    this.#pendingInterjections = [];
    return taken;
  }
}

/** What the run's telemetry plugins keep with its pause, when they keep anything. */
function telemetryOf(telemetry: RunTelemetryFanOut | undefined): Pick<PausedRun, 'telemetry'> {
  const contexts = telemetry?.pauseContexts() ?? {};
  return Object.keys(contexts).length === 0 ? {} : { telemetry: contexts };
}
