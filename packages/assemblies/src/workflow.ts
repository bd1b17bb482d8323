import { ConfigurationError } from '@ghost/core';
import {
  type Assembly,
  type AssemblyScope,
  assemblyEntry,
  isAgent,
  isAssembly,
  type Runnable,
  registerAssembly,
  runStep,
  type StepResult,
  wholeNumberAtLeast,
} from './assembly.js';

/** The options of {@link WorkflowContext.invoke}. */
export interface InvokeOptions {
  /** Messages before `input`, for an agent: the conversation it continues. */
  readonly history?: readonly { readonly role: 'user' | 'assistant'; readonly content: string }[];
  /** Context for this child, over the one the workflow runs with, key by key. */
  readonly context?: Readonly<Record<string, unknown>>;
}

/** The options of {@link WorkflowContext.parallel}. */
export interface ParallelOptions {
  /** How many run at once. Default 8. */
  readonly maxConcurrency?: number;
}

/** Work `parallel` takes: a function that starts it, or a lazy invocation (`ctx.invoke(...)`). */
export type ParallelTask<Value> = (() => PromiseLike<Value>) | PromiseLike<Value>;

/** What a workflow's `perform` gets: the way to run agents and assemblies in its run. */
export interface WorkflowContext {
  /** The workflow's name. */
  readonly name: string;
  /** Aborts when the run is cancelled or reaches its deadline. */
  readonly signal: AbortSignal;
  /** The context the run was asked with (and the one `invoke` gave, for a nested workflow). */
  readonly context: Readonly<Record<string, unknown>>;
  /**
   * Runs an agent or an assembly as a step of this workflow, nested in its run (cancellation,
   * deadline, usage, cleanup); the child inherits the workflow's context. Lazy: nothing runs
   * until the result is awaited (or passed to `parallel`). Resolves to the child's result, whose
   * `response` is its text; rejects with the error that ended it.
   */
  invoke(child: Runnable, input: string, options?: InvokeOptions): PromiseLike<StepResult>;
  /**
   * Runs tasks at most `maxConcurrency` (default 8) at a time and resolves to their results in
   * order. When one fails no further task starts; those running finish (the run's cancellation
   * stops them), then it rejects with the first error.
   */
  parallel<Value>(tasks: readonly ParallelTask<Value>[], options?: ParallelOptions): Promise<Value[]>;
}

/** The options of {@link defineWorkflow}. */
export interface WorkflowDefinition {
  /** A name for logs and events. */
  readonly name: string;
  /**
   * The workflow's work. What it returns becomes the run's response: a string as it is, a step's
   * result as its `response`, anything else as JSON (and `run.output`).
   */
  perform(context: WorkflowContext, input: string): Promise<unknown>;
}

/** A workflow made by {@link defineWorkflow}. */
export interface Workflow extends Assembly {
  readonly kind: 'workflow';
}

const definitionKeys: ReadonlySet<string> = new Set(['name', 'perform']);
const defaultMaxConcurrency = 8;

/**
 * Defines a workflow: your code decides which agents run, in what order and in parallel. Asked
 * like an agent, it returns one `Run` over every agent it ran.
 *
 * @example
 * ```ts
 * const pipeline = defineWorkflow({
 *   name: 'research-and-write',
 *   async perform(ctx, topic) {
 *     const [facts, quotes] = await ctx.parallel([
 *       ctx.invoke(researcher, `Facts about ${topic}`),
 *       ctx.invoke(researcher, `Quotes about ${topic}`),
 *     ]);
 *     const draft = await ctx.invoke(writer, `${facts.response}\n\n${quotes.response}`);
 *     return draft.response;
 *   },
 * });
 * const run = await pipeline.ask('Lisbon');
 * ```
 */
export function defineWorkflow(definition: WorkflowDefinition): Workflow {
  checkDefinition(definition);
  const { name } = definition;
  const perform = async (scope: AssemblyScope, input: string): Promise<StepResult> => {
    const value = await definition.perform(workflowContext(scope), input);
    return resultOf(value);
  };
  const workflow: Workflow = Object.freeze(assemblyEntry('workflow', name, perform));
  registerAssembly(workflow, perform);
  return workflow;
}

function checkDefinition(definition: WorkflowDefinition): void {
  if (typeof definition !== 'object' || definition === null) {
    throw new ConfigurationError('defineWorkflow() takes a definition object.', {
      code: 'CONFIGURATION_INVALID',
    });
  }
  const { name } = definition;
  if (typeof name !== 'string' || name.trim() === '') {
    throw new ConfigurationError('A workflow needs a non-empty name.', { code: 'AGENT_NAME_INVALID' });
  }
  for (const key of Object.keys(definition)) {
    if (!definitionKeys.has(key)) {
      throw new ConfigurationError(
        `Workflow '${name}' has no option '${key}'. Known options: ${[...definitionKeys].join(', ')}.`,
        { code: 'OPTION_UNKNOWN', option: key },
      );
    }
  }
  if (typeof definition.perform !== 'function') {
    throw new ConfigurationError(`Workflow '${name}' needs a perform(ctx, input) function.`, {
      code: 'CONFIGURATION_INVALID',
    });
  }
}

function resultOf(value: unknown): StepResult {
  if (typeof value === 'string') return { response: value };
  if (value === undefined || value === null) return { response: '' };
  if (typeof value === 'object' && typeof (value as StepResult).response === 'string') {
    const { response, output } = value as StepResult;
    return output === undefined ? { response } : { response, output };
  }
  return { response: JSON.stringify(value) ?? String(value), output: value };
}

function workflowContext(scope: AssemblyScope): WorkflowContext {
  const { execution } = scope;
  return Object.freeze({
    name: scope.assemblyName,
    signal: execution.signal,
    context: Object.freeze({ ...execution.runContext.invocation.context, ...scope.context }),
    invoke: (child: Runnable, input: string, options: InvokeOptions = {}) => {
      checkChild(scope.assemblyName, child, input);
      return new LazyStep(() =>
        runStep(scope, {
          step: child.name,
          runnable: child,
          input,
          ...(options.history ? { history: options.history } : {}),
          ...(options.context ? { context: options.context } : {}),
        }),
      );
    },
    parallel: <Value>(tasks: readonly ParallelTask<Value>[], options: ParallelOptions = {}) =>
      runParallel(scope, tasks, options),
  });
}

function checkChild(workflowName: string, child: unknown, input: unknown): void {
  if (!isAgent(child) && !isAssembly(child)) {
    throw new ConfigurationError(
      `ctx.invoke() of workflow '${workflowName}' takes an agent (defineAgent) or an assembly (defineWorkflow, defineSwarm, defineGraph).`,
      { code: 'CONFIGURATION_INVALID' },
    );
  }
  if (typeof input !== 'string') {
    throw new ConfigurationError(`ctx.invoke() of workflow '${workflowName}' takes its input as a string.`, {
      code: 'AGENT_INPUT_INVALID',
    });
  }
}

/** A step that starts the first time it is awaited (or `then` is called), and only once. */
class LazyStep implements PromiseLike<StepResult> {
  readonly #start: () => Promise<StepResult>;
  #promise: Promise<StepResult> | undefined;

  constructor(start: () => Promise<StepResult>) {
    this.#start = start;
  }

  // biome-ignore lint/suspicious/noThenProperty: a lazy step is awaited like a promise, which is the point
  then<Fulfilled = StepResult, Rejected = never>(
    onFulfilled?: ((value: StepResult) => Fulfilled | PromiseLike<Fulfilled>) | null,
    onRejected?: ((reason: unknown) => Rejected | PromiseLike<Rejected>) | null,
  ): Promise<Fulfilled | Rejected> {
    this.#promise ??= this.#start();
    return this.#promise.then(onFulfilled, onRejected);
  }
}

async function runParallel<Value>(
  scope: AssemblyScope,
  tasks: readonly ParallelTask<Value>[],
  options: ParallelOptions,
): Promise<Value[]> {
  const maxConcurrency = options.maxConcurrency ?? defaultMaxConcurrency;
  if (!wholeNumberAtLeast(maxConcurrency, 1)) {
    throw new ConfigurationError(
      `ctx.parallel() of workflow '${scope.assemblyName}' has maxConcurrency = ${maxConcurrency}; use a whole number of at least 1.`,
      { code: 'CONFIGURATION_INVALID' },
    );
  }
  if (!Array.isArray(tasks)) {
    throw new ConfigurationError('ctx.parallel() takes an array of tasks.', {
      code: 'CONFIGURATION_INVALID',
    });
  }
  const results = new Array<Value>(tasks.length);
  const { signal } = scope.execution;
  let next = 0;
  let failure: { readonly error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failure === undefined && !signal.aborted && next < tasks.length) {
      const index = next;
      next += 1;
      const task = tasks[index];
      try {
        results[index] = await (typeof task === 'function' ? task() : (task as PromiseLike<Value>));
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  const workers: Promise<void>[] = [];
  for (let count = 0; count < Math.min(maxConcurrency, tasks.length); count += 1) workers.push(worker());
  await Promise.all(workers);
  if (failure !== undefined) throw failure.error;
  scope.execution.runContext.throwIfStopped();
  return results;
}
