import type { Agent, ErrorSummary, Run, RunStream, Tool } from '@ghost/core';
import { CancelledError, GhostError } from '@ghost/core';
import type { RunStep } from '@ghost/core/assembly';
import { type AssemblyAskOptions, type AssemblyExecution, createAssemblyRun } from '@ghost/core/assembly';
import { AssemblyStepTimeoutError } from './assembly-errors.js';

/**
 * A Workflow, Swarm or Graph: asked like an agent, it returns the same core `Run` (its outcome,
 * events, usage summed over every agent, cleanup). `run.result.steps` lists the steps it took.
 */
export interface Assembly {
  readonly kind: 'workflow' | 'swarm' | 'graph';
  readonly name: string;
  /** Runs the assembly and resolves to the finished run, whatever its outcome. */
  ask(input: string, options?: AssemblyAskOptions): Promise<Run>;
  /**
   * Runs the assembly, streaming its events: the run's, the assembly's own (`assembly_step_start`,
   * `assembly_transition`, ...) and, with `includeAgentEvents: true`, every step's agent's as
   * `agent_stream` events whose `source.path` says where it ran.
   */
  streamAsk(input: string, options?: AssemblyAskOptions): RunStream;
  /** Makes a run that has not started: register resources on it, then `execute()` or `stream()` it. */
  createRun(input: string, options?: AssemblyAskOptions): Run;
}

/** What an assembly's step runs: an agent, or another assembly (run nested, inside the same Run). */
export type Runnable = Agent | Assembly;

/** What a step produced: `response` is its answer's text. */
export interface StepResult {
  /** The step's answer: its agent's text, or the nested assembly's response. */
  readonly response: string;
  /** The value of the agent's `output` schema (or the nested workflow's non-string result), if any. */
  readonly output?: unknown;
}

/** The trajectory of one run, shared by every assembly nested in it. */
class Trajectory {
  static readonly maxKept = 10_000;
  readonly steps: RunStep[] = [];
  #nextId = 1;

  nextStepId(): string {
    const id = String(this.#nextId);
    this.#nextId += 1;
    return id;
  }

  record(step: RunStep): void {
    // Bounded: a run that takes more steps keeps the first ones (the events carry every one).
    if (this.steps.length < Trajectory.maxKept) this.steps.push(step);
  }
}

/** Where an assembly runs inside its run: at the top, or as a step of another assembly. */
export interface AssemblyScope {
  readonly execution: AssemblyExecution;
  readonly assemblyName: string;
  /** The path segments above this assembly's steps. */
  readonly prefix: readonly string[];
  readonly trajectory: Trajectory;
  /** Context this assembly's steps get over the run's (a workflow's `invoke(..., { context })`). */
  readonly context: Readonly<Record<string, unknown>> | undefined;
  /** Stops this assembly's steps alone (the timeout of the step that runs it), beside the run's signal. */
  readonly signal: AbortSignal | undefined;
}

/** How an assembly performs inside a scope: its whole run's work, returning its response. */
export type PerformInScope = (scope: AssemblyScope, input: string) => Promise<StepResult>;

const performers = new WeakMap<object, PerformInScope>();

/** Builds the `ask` / `streamAsk` / `createRun` of an assembly whose work is `perform`. */
export function assemblyEntry<Kind extends Assembly['kind']>(
  kind: Kind,
  name: string,
  perform: PerformInScope,
): Pick<Assembly, 'kind' | 'name' | 'ask' | 'streamAsk' | 'createRun'> & { readonly kind: Kind } {
  const createRun = (input: string, options?: AssemblyAskOptions): Run =>
    createAssemblyRun({
      name,
      input,
      ...(options ? { options } : {}),
      async perform(execution) {
        const trajectory = new Trajectory();
        const scope: AssemblyScope = {
          execution,
          assemblyName: name,
          prefix: [],
          trajectory,
          context: undefined,
          signal: undefined,
        };
        const result = await perform(scope, input);
        return {
          text: result.response,
          steps: trajectory.steps,
          ...(result.output !== undefined ? { output: result.output } : {}),
        };
      },
    });
  return {
    kind,
    name,
    createRun,
    ask: (input, options) => createRun(input, options).execute(),
    streamAsk: (input, options) => createRun(input, options).stream(),
  };
}

/** Lets `assembly` run nested as another assembly's step. */
export function registerAssembly(assembly: Assembly, perform: PerformInScope): void {
  performers.set(assembly, perform);
}

/** Whether `value` is an assembly made by this package. */
export function isAssembly(value: unknown): value is Assembly {
  return typeof value === 'object' && value !== null && performers.has(value);
}

/** Whether `value` is an agent made by `defineAgent`. */
export function isAgent(value: unknown): value is Agent {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'agent';
}

/** One step to run (see {@link runStep}). */
export interface StepRequest {
  readonly step: string;
  readonly runnable: Runnable;
  readonly input: string;
  /** The conversation before `input`, for an agent (a workflow's `invoke(..., { history })`). */
  readonly history?: readonly { role: 'user' | 'assistant'; content: string }[];
  readonly context?: Readonly<Record<string, unknown>>;
  readonly timeoutMs?: number;
  readonly retries?: number;
  readonly retryDelayMs?: number;
  /** Tools the step's agent gets beside its own (a swarm's handoffs). */
  readonly tools?: readonly Tool[];
}

/**
 * Runs one step (an agent nested in the run, or a nested assembly), announcing it with
 * `assembly_step_start` and ending it with `assembly_step_stop` or `assembly_step_error`; a
 * failed attempt is retried after `assembly_step_retry` while retries remain. Records the step
 * in the trajectory. Rejects with the step's error (an `AssemblyStepTimeoutError` for a timeout).
 */
export async function runStep(scope: AssemblyScope, request: StepRequest): Promise<StepResult> {
  const { execution, assemblyName, trajectory } = scope;
  const stepId = trajectory.nextStepId();
  const path = Object.freeze([...scope.prefix, `step:${request.step}`]);
  const agentName = request.runnable.name;
  const retries = request.retries ?? 0;
  const started = performance.now();
  for (let attempt = 1; ; attempt += 1) {
    execution.runContext.throwIfStopped();
    const common = { assemblyName, stepId, step: request.step, agentName, path, attempt };
    execution.emit('assembly_step_start', { ...common, input: request.input });
    const attemptStarted = performance.now();
    try {
      const result = await execution.inStep(stepId, () => attemptStep(scope, request, path));
      const durationMs = performance.now() - attemptStarted;
      execution.emit('assembly_step_stop', { ...common, response: result.response, durationMs });
      trajectory.record({
        stepId,
        assemblyName,
        step: request.step,
        agentName,
        path,
        attempts: attempt,
        outcome: 'completed',
        input: request.input,
        response: result.response,
        durationMs: performance.now() - started,
      });
      return result;
    } catch (error) {
      // A stop of the run or of this assembly (its own step's timeout, a graph's finish) is not retried.
      const isStopped = execution.signal.aborted || scope.signal?.aborted === true;
      const willRetry = !isStopped && attempt <= retries;
      const summary = summaryOf(error);
      execution.emit('assembly_step_error', {
        ...common,
        error: summary,
        willRetry,
        durationMs: performance.now() - attemptStarted,
      });
      if (!willRetry) {
        trajectory.record({
          stepId,
          assemblyName,
          step: request.step,
          agentName,
          path,
          attempts: attempt,
          outcome: 'failed',
          input: request.input,
          response: '',
          error: summary,
          durationMs: performance.now() - started,
        });
        throw error;
      }
      const delayMs = request.retryDelayMs ?? 0;
      execution.emit('assembly_step_retry', { ...common, attempt: attempt + 1, delayMs, error: summary });
      await sleep(delayMs, execution.signal);
    }
  }
}

async function attemptStep(
  scope: AssemblyScope,
  request: StepRequest,
  path: readonly string[],
): Promise<StepResult> {
  const { timeoutMs } = request;
  const controller = timeoutMs === undefined ? undefined : new AbortController();
  const timer =
    controller === undefined
      ? undefined
      : setTimeout(() => {
          controller.abort(
            new AssemblyStepTimeoutError(
              `Step '${request.step}' of assembly '${scope.assemblyName}' ran longer than its ${timeoutMs} ms timeout and was stopped.`,
              { step: request.step, timeoutMs: timeoutMs ?? 0 },
            ),
          );
        }, timeoutMs);
  try {
    return await runRunnable(scope, request, path, controller?.signal);
  } catch (error) {
    // The timeout, not the abort it caused inside the agent, is why the step failed.
    if (controller?.signal.aborted && !scope.execution.signal.aborted && !scope.signal?.aborted) {
      throw controller.signal.reason;
    }
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

async function runRunnable(
  scope: AssemblyScope,
  request: StepRequest,
  path: readonly string[],
  signal: AbortSignal | undefined,
): Promise<StepResult> {
  const context =
    scope.context === undefined && request.context === undefined
      ? undefined
      : { ...scope.context, ...request.context };
  const { runnable } = request;
  const stepSignal = either(scope.signal, signal);
  const perform = performers.get(runnable);
  if (perform !== undefined) {
    // A nested assembly runs its steps in this run, below this step's path.
    const nested: AssemblyScope = {
      execution: scope.execution,
      assemblyName: runnable.name,
      prefix: [...path, runnable.name],
      trajectory: scope.trajectory,
      context,
      signal: stepSignal,
    };
    return perform(nested, request.input);
  }
  const input =
    request.history === undefined || request.history.length === 0
      ? request.input
      : [...request.history, { role: 'user' as const, content: request.input }];
  const nested = await scope.execution.runAgent(runnable as Agent, input, {
    path,
    ...(stepSignal ? { signal: stepSignal } : {}),
    ...(context ? { context } : {}),
    ...(request.tools ? { tools: request.tools } : {}),
  });
  const { text, output } = nested.result;
  return output === undefined ? { response: text } : { response: text, output };
}

function either(first: AbortSignal | undefined, second: AbortSignal | undefined): AbortSignal | undefined {
  if (first === undefined) return second;
  if (second === undefined) return first;
  return AbortSignal.any([first, second]);
}

/** Waits `ms`, or rejects with the signal's reason when it aborts first; the timer is always cleared. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason ?? new CancelledError());
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** How an error appears in an event: its name, code and message. */
function summaryOf(error: unknown): ErrorSummary {
  if (error instanceof Error) {
    const code = GhostError.isInstance(error) ? (error as GhostError).code : undefined;
    return { name: error.name, code, message: error.message };
  }
  return { name: 'Error', code: undefined, message: String(error) };
}

/** A run-time check of an option, failing with a `ConfigurationError`-style message. */
export function wholeNumberAtLeast(value: unknown, minimum: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= minimum;
}
