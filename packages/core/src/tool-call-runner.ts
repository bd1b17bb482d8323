import { CallCancellation } from './call-cancellation.js';
import { ApprovalError, GhostError, ToolError, ToolResultInvalidError, ToolTimeoutError } from './errors.js';
import { loadSchemaCompiler } from './json-schema-validator.js';
import { toJsonValue } from './json-value.js';
import type { Artifact, ModelMessage } from './model.js';
import { type RunContext, stopReason } from './run-context.js';
import type { ErrorSummary, StreamEventDataMap, StreamEventType } from './stream-event.js';
import type { TelemetryEventDetail, TelemetryScope } from './telemetry.js';
import { type SchemaProblem, type Tool, type ToolContext, ToolResult } from './tool.js';
import { type ApprovalGate, approvalRefusal, callNeedsApproval } from './tool-approval.js';
import type { ToolLock } from './tool-lock.js';

/**
 * Emits one stream event of the running run. `detail` is for telemetry only: `hidden` keeps the
 * event out of the public stream (code mode's control calls), `request` is a model turn's request.
 */
export type EmitEvent = <Type extends StreamEventType>(
  type: Type,
  data: StreamEventDataMap[Type],
  detail?: TelemetryEventDetail,
) => void;

/** Runs work with a telemetry scope current (see `RunTelemetry.runInScope`). */
export type InScope = <Result>(scope: TelemetryScope, work: () => Result) => Result;

/** The options of {@link ToolCallBudget}'s constructor. */
export interface ToolCallBudgetOptions {
  /**
   * The budget of the invocation this one runs in (an agent run as a tool): every call taken
   * here is taken there too, so an agent's limit counts the calls of the agents it runs.
   */
  readonly parent?: ToolCallBudget | undefined;
  /** The agent whose limit this is, for the message a refused call gets. */
  readonly agentName?: string;
  /** Calls already taken (a resumed run's, before it paused). Default 0. */
  readonly used?: number;
}

/**
 * Counts the tool calls of one agent invocation against its agent's `maxToolCalls`. With a
 * `parent` (an agent run nested in another), each call counts toward this budget and every
 * budget above it, so the run's own agent's `maxToolCalls` bounds the calls of the whole run.
 */
export class ToolCallBudget {
  readonly limit: number;
  /** The budget of the invocation this one runs in, if any. */
  readonly parent: ToolCallBudget | undefined;
  /** The agent whose limit this is, when known. */
  readonly agentName: string | undefined;
  #used = 0;

  constructor(limit: number, options: ToolCallBudgetOptions = {}) {
    this.limit = limit;
    this.parent = options.parent;
    this.agentName = options.agentName;
    this.#used = options.used ?? 0;
  }

  /** The calls taken from this budget: its own invocation's, and those of the invocations nested in it. */
  get used(): number {
    return this.#used;
  }

  /** Takes one call from the budget and every budget above it; false when one of them has none left. */
  tryTake(): boolean {
    return this.take() === undefined;
  }

  /**
   * Takes one call from the budget and every budget above it. Returns `undefined` when it did,
   * or the budget that had none left (this one or one above), in which case nothing was taken.
   */
  take(): ToolCallBudget | undefined {
    for (let budget: ToolCallBudget | undefined = this; budget !== undefined; budget = budget.parent) {
      if (budget.#used >= budget.limit) return budget;
    }
    for (let budget: ToolCallBudget | undefined = this; budget !== undefined; budget = budget.parent) {
      budget.#used += 1;
    }
    return undefined;
  }
}

/** What the model reads when a call is refused because `exhausted` has no call left. */
function budgetRefusal(own: ToolCallBudget, exhausted: ToolCallBudget): string {
  if (exhausted === own) {
    return `This run reached its limit of ${own.limit} tool calls; answer with what you have.`;
  }
  const agent = exhausted.agentName === undefined ? 'The agent' : `Agent '${exhausted.agentName}'`;
  return `${agent}, which runs this one, reached its limit of ${exhausted.limit} tool calls (its own and those of the agents it runs); answer with what you have.`;
}

/** What a tool call needs from the run it belongs to. */
export interface ToolCallEnvironment {
  readonly runContext: RunContext;
  readonly emit: EmitEvent;
  readonly budget: ToolCallBudget;
  readonly lock: ToolLock;
  readonly tools: ReadonlyMap<string, Tool>;
  /**
   * Code mode's control tools: they take nothing from the budget, never wait for the lock (a
   * brokered exclusive tool would otherwise deadlock behind its own `exec`) and their events are
   * hidden from the public stream (telemetry still sees them).
   */
  readonly controlToolNames?: ReadonlySet<string>;
  /** Makes the call's telemetry scope current while the tool executes. */
  readonly inScope?: InScope;
  /**
   * Where calls of a tool with `needsApproval` wait for a person's decision. Without it such a
   * call is refused before it runs (fail closed).
   */
  readonly approvals?: ApprovalGate;
}

/** One call to run: the model's (or a program's) request. */
export interface ToolCallRequest {
  readonly toolCallId: string;
  readonly toolName: string;
  /** The parsed arguments. */
  readonly input: unknown;
  /**
   * Why the arguments could not be read (not JSON, nested too deep), when they could not; the
   * call then fails validation with this reason, which the model reads.
   */
  readonly argumentsError?: string;
  /** The id of the call this one runs under (code mode's control operation). */
  readonly parentToolCallId?: string;
  /** Aborts this call alone, such as when the program that made it ends. */
  readonly signal?: AbortSignal;
}

/** The result of one tool call, as the model will read it. */
export interface ToolCallOutcome {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly status: 'success' | 'error';
  /** The text the model reads. */
  readonly content: string;
  /** The tool's JSON value, on success. */
  readonly value?: unknown;
  readonly error?: ErrorSummary;
  readonly artifacts: readonly Artifact[];
}

/** The error summary events carry: never a stack. */
export function summarizeError(error: unknown): ErrorSummary {
  if (error instanceof Error || GhostError.isInstance(error)) {
    const code = (error as { code?: unknown }).code;
    return { name: error.name, code: typeof code === 'string' ? code : undefined, message: error.message };
  }
  return { name: typeof error, code: undefined, message: String(error) };
}

function formatProblems(problems: readonly SchemaProblem[]): string {
  const shown = problems.slice(0, 5).map((problem) => `${problem.path || '/'}: ${problem.message}`);
  if (problems.length > shown.length) shown.push(`and ${problems.length - shown.length} more`);
  return shown.join('; ');
}

function errorName(error: unknown): string {
  if (error instanceof Error) return error.name || error.constructor.name;
  return error === null ? 'null' : typeof error;
}

/** Thrown inside the pipeline when the call is rejected before `execute`; its message goes to the model. */
class ToolCallRejection extends Error {}

function contentOf(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

async function invoke(tool: Tool, input: unknown, context: ToolContext): Promise<unknown> {
  return await tool.execute(input as never, context);
}

/**
 * Runs one tool call through the whole pipeline every call takes, direct or brokered: budget,
 * lookup, validation, a person's approval (`needsApproval`, through `environment.approvals`),
 * authorization, the exclusive lock, execution under a timeout and the run's
 * signal, result checks, and the `tool_start` / `tool_stop` events.
 *
 * Failures the model can recover from become an error outcome. Cancellation and the deadline are
 * not results: they reject with `CancelledError` / `DeadlineExceededError`.
 */
export async function runToolCall(
  request: ToolCallRequest,
  environment: ToolCallEnvironment,
): Promise<ToolCallOutcome> {
  const { runContext } = environment;
  const { toolCallId, toolName } = request;
  const isControl = environment.controlToolNames?.has(toolName) === true;
  const emit: EmitEvent = isControl
    ? (type, data) => environment.emit(type, data, { hidden: true })
    : environment.emit;
  const parent = request.parentToolCallId === undefined ? {} : { parentToolCallId: request.parentToolCallId };
  runContext.throwIfStopped();
  emit('tool_start', { toolCallId, toolName, ...parent, input: request.input });
  const startedAt = performance.now();

  const finish = (
    outcome: Omit<ToolCallOutcome, 'toolCallId' | 'toolName'>,
    detail?: TelemetryEventDetail,
  ): ToolCallOutcome => {
    const result: ToolCallOutcome = { toolCallId, toolName, ...outcome };
    emit(
      'tool_stop',
      {
        toolCallId,
        toolName,
        ...parent,
        status: result.status,
        content: result.content,
        ...(result.status === 'success' ? { value: result.value } : {}),
        ...(result.error ? { error: result.error } : {}),
        ...(result.artifacts.length > 0 ? { artifacts: result.artifacts } : {}),
        durationMs: performance.now() - startedAt,
      },
      detail,
    );
    return result;
  };
  const fail = (content: string, error: unknown) =>
    finish({ status: 'error', content, error: summarizeError(error), artifacts: [] });

  try {
    const tool = environment.tools.get(toolName);
    if (!tool) {
      const names = [...environment.tools.keys()].join(', ') || 'none';
      throw new ToolCallRejection(`Unknown tool '${toolName}'. Available tools: ${names}.`);
    }
    if (request.argumentsError !== undefined) {
      throw new ToolCallRejection(`Invalid tool input: /: ${request.argumentsError}`);
    }
    // The compiler loads once per process, off the event loop's critical path where it can.
    await loadSchemaCompiler();
    const problems = tool.validateInput(request.input);
    if (problems.length > 0) throw new ToolCallRejection(`Invalid tool input: ${formatProblems(problems)}`);
    const exhausted = isControl ? undefined : environment.budget.take();
    if (exhausted !== undefined) throw new ToolCallRejection(budgetRefusal(environment.budget, exhausted));
    // A person's decision, in one place for direct and brokered calls; the wait is not the tool's time.
    if ((await awaitApproval(tool, request, environment)) === 'suspended') {
      // The run saves its pause before anything announces it: only telemetry sees this stop.
      const error = new ApprovalError(
        `The call to ${toolName} waits for a person's approval; the run suspended, and agent.resume() continues it.`,
        { code: 'APPROVAL_SUSPENDED' },
      );
      const summary = summarizeError(error);
      return finish(
        { status: 'error', content: error.message, error: summary, artifacts: [] },
        { hidden: true },
      );
    }
    await checkAuthorization(tool, request, runContext);
    const { value, artifacts } = await executeUnderLimits(tool, request, environment, isControl);
    return finish({ status: 'success', content: contentOf(value), value, artifacts });
  } catch (error) {
    if (runContext.signal.aborted) throw stopReason(runContext.signal);
    if (request.signal?.aborted)
      return fail('The tool call was cancelled: the program that made it ended.', error);
    if (error instanceof ToolCallRejection) return fail(error.message, error);
    if (ApprovalError.isInstance(error)) return fail(error.message, error);
    if (ToolError.isInstance(error)) return fail(error.message, error);
    if (ToolTimeoutError.isInstance(error)) return fail(error.message, error);
    return fail(`Tool failed (${errorName(error)})`, error);
  }
}

/**
 * Asks a person, when the call needs approval, through the environment's gate: resolves once it is
 * approved (or needs none), or `'suspended'` when the run pauses for it; throws a rejection the
 * model reads otherwise.
 */
async function awaitApproval(
  tool: Tool,
  request: ToolCallRequest,
  environment: ToolCallEnvironment,
): Promise<'suspended' | undefined> {
  const { toolCallId, toolName } = request;
  if (!(await callNeedsApproval(tool, request.input, toolCallId, environment.runContext))) return undefined;
  const gate = environment.approvals;
  if (gate === undefined) {
    throw new ToolCallRejection(
      `The call to ${toolName} needs a person's approval, and no one can be asked here; it did not run.`,
    );
  }
  const answer = await gate.request({
    toolCallId,
    toolName,
    input: request.input,
    signal: request.signal,
  });
  if (answer.decision === 'suspended') return 'suspended';
  if (answer.decision === 'cancelled') {
    throw new ToolCallRejection(
      `The call to ${toolName} was cancelled while it waited for approval; it did not run.`,
    );
  }
  if (answer.decision !== 'approved') throw approvalRefusal(toolName, answer, gate.timeoutMs);
  return undefined;
}

/** Asks the tool's `authorize` hook, when it has one; throws a rejection the model reads when refused. */
async function checkAuthorization(
  tool: Tool,
  request: ToolCallRequest,
  runContext: RunContext,
): Promise<void> {
  if (!tool.authorize) return;
  const { invocation } = runContext;
  const decision = await tool.authorize({
    toolName: request.toolName,
    input: request.input,
    actorId: invocation.actorId,
    context: invocation.context,
    run: runContext,
  });
  if (!decision.allow) throw new ToolCallRejection(`Not authorized: ${decision.reason}`);
}

async function executeUnderLimits(
  tool: Tool,
  request: ToolCallRequest,
  environment: ToolCallEnvironment,
  isControl: boolean,
): Promise<{ value: unknown; artifacts: readonly Artifact[] }> {
  const { runContext } = environment;
  const cancellation = new CallCancellation([runContext.signal, request.signal]);
  let release: () => void;
  if (isControl) {
    release = () => {};
  } else {
    const granted = environment.lock.tryAcquire(tool.exclusive);
    if (granted) {
      release = granted;
    } else {
      const acquiring = environment.lock.acquire(tool.exclusive);
      try {
        release = await cancellation.race(acquiring);
      } catch (error) {
        cancellation.dispose();
        // Given up while waiting: hand the lock back as soon as it is granted, so no one waits forever.
        void acquiring.then((lateRelease) => lateRelease());
        throw error;
      }
    }
  }
  const timer = setTimeout(() => {
    cancellation.cancel(new ToolTimeoutError(`Tool '${tool.name}' timed out after ${tool.timeoutMs} ms.`));
  }, tool.timeoutMs);
  try {
    const context: ToolContext = {
      get signal() {
        return cancellation.signal;
      },
      toolCallId: request.toolCallId,
      run: runContext,
    };
    const execute = () => invoke(tool, request.input, context);
    const scope = { kind: 'tool', toolCallId: request.toolCallId } as const;
    const returned = await cancellation.race(
      environment.inScope ? environment.inScope(scope, execute) : execute(),
    );
    const result = returned instanceof ToolResult ? returned : new ToolResult({ value: returned });
    const json = toJsonValue(result.value);
    if (!json.ok)
      throw new ToolResultInvalidError(
        `Tool '${tool.name}' returned a value that is not JSON: ${json.problem}.`,
      );
    const problems = tool.validateOutput(json.value);
    if (problems.length > 0) {
      throw new ToolResultInvalidError(
        `Tool '${tool.name}' returned a value that does not match its output schema: ${formatProblems(problems)}.`,
      );
    }
    return { value: json.value, artifacts: result.artifacts };
  } finally {
    clearTimeout(timer);
    cancellation.dispose();
    release();
  }
}

/** A call's outcome as the tool message the model reads. */
export function toolResultMessage(outcome: ToolCallOutcome): ModelMessage {
  return {
    role: 'tool',
    toolCallId: outcome.toolCallId,
    toolName: outcome.toolName,
    content: outcome.content,
    ...(outcome.status === 'error' ? { isError: true } : {}),
    ...(outcome.artifacts.length > 0 ? { artifacts: outcome.artifacts } : {}),
  };
}
