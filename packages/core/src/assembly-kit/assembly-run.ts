import { type Agent, type AgentInput, resolveDeadline } from '../agent.js';
import { ConfigurationError } from '../errors.js';
import { randomUUID } from '../lazy-builtins.js';
import { bindInvocationScope, runNestedAgent } from '../nested-agent.js';
import { Run, type RunResult, type RunStep } from '../run.js';
import type { Invocation, RunContext } from '../run-context.js';
import { defaultRuntime, type Runtime } from '../runtime.js';
import type { StreamEventDataMap } from '../stream-event.js';
import type { Tool } from '../tool.js';
import { ToolCallBudget } from '../tool-call-runner.js';
import type { Usage } from '../usage.js';

/** The options of an assembly's `ask`, `streamAsk` and `createRun`: an agent's, without what only an agent has. */
export interface AssemblyAskOptions {
  /** Cancels the run: it ends as `cancelled`, every step's agent stopped. */
  readonly signal?: AbortSignal;
  /** A time budget in milliseconds for the whole run; when it runs out the run ends as `partial`. */
  readonly timeoutMs?: number;
  /** An absolute deadline (a `Date` or milliseconds since the epoch); the earlier of this and `timeoutMs` wins. */
  readonly deadline?: Date | number;
  /** A trusted caller id for authorization. Never take it from model output. */
  readonly actorId?: string;
  /** Application data for tools and authorization; every step's agent sees it. */
  readonly context?: Readonly<Record<string, unknown>>;
  /** Application metadata for tracing and logs. */
  readonly metadata?: Readonly<Record<string, unknown>>;
  /** The runtime to run in; default: the process default from `configure()`. */
  readonly runtime?: Runtime;
  /**
   * Stream the events of the steps' agents as `agent_stream` events, each with its source (the
   * step's path, the agent's name and invocation id). Without it only the assembly's own events
   * (`assembly_step_start`, ...) and the run's are streamed. Default false.
   */
  readonly includeAgentEvents?: boolean;
}

/** The event types an assembly emits itself. */
export type AssemblyEventType =
  | 'assembly_step_start'
  | 'assembly_step_stop'
  | 'assembly_step_error'
  | 'assembly_step_retry'
  | 'assembly_fork'
  | 'assembly_join'
  | 'assembly_transition'
  | 'assembly_handoff_loop';

/** What an agent run as an assembly's step produced. */
export interface AssemblyAgentResult {
  /** The agent's result: `text` is its answer. */
  readonly result: RunResult;
  /** The tokens its model turns used (the run's usage includes them). */
  readonly usage: Usage;
  readonly invocationId: string;
}

/** The options of {@link AssemblyExecution.runAgent}. */
export interface AssemblyAgentOptions {
  /**
   * Where the agent runs, as path segments, ending with `step:<step>` (the segments of the
   * assemblies above first). Its events' `source.path` is this, then its name and invocation id.
   */
  readonly path: readonly string[];
  /** Ends this agent alone (a step's timeout). */
  readonly signal?: AbortSignal;
  /** Context for this agent, over the run's, key by key. */
  readonly context?: Readonly<Record<string, unknown>>;
  /**
   * Tools for this invocation beside the agent's own (a swarm's `transfer_to_<member>`):
   * model-facing, in code mode too, over the agent's own tools of the same name.
   */
  readonly tools?: readonly Tool[];
}

/** What an assembly's `perform` gets: the run it executes in, and the way to run agents in it. */
export interface AssemblyExecution {
  /** The assembly's name (the run's entrypoint). */
  readonly assemblyName: string;
  /** The run's context: its invocation (context, actor, deadline), signal and state. */
  readonly runContext: RunContext;
  /** Aborts when the run is cancelled or reaches its deadline. */
  readonly signal: AbortSignal;
  /** Emits one of the assembly's own events on the run's stream (and to its telemetry). */
  emit<Type extends AssemblyEventType>(type: Type, data: StreamEventDataMap[Type]): void;
  /**
   * Runs an agent nested in the run as a step: it shares the run's cancellation, deadline,
   * usage and cleanup, has its own invocation id, its events reach the stream as `agent_stream`
   * events (when asked for), and `run.interject()` reaches it while it is the only agent running.
   * Rejects with whatever ended the agent's invocation.
   */
  runAgent(agent: Agent, input: AgentInput, options: AssemblyAgentOptions): Promise<AssemblyAgentResult>;
  /**
   * Runs `work` (a step's agent, or a nested assembly) inside the step whose
   * `assembly_step_start` announced `stepId`, so telemetry nests what it does beneath the step.
   */
  inStep<Result>(stepId: string, work: () => Result): Result;
}

/** What an assembly's `perform` produced. */
export interface AssemblyPerformed {
  /** The run's response. */
  readonly text: string;
  /** The steps taken, in the order they ended: `run.result.steps`. */
  readonly steps: readonly RunStep[];
  /** The value `run.output` holds, if any. */
  readonly output?: unknown;
}

/** The options of {@link createAssemblyRun}. */
export interface AssemblyRunInit {
  /** The assembly's name: the run's `agentName`. */
  readonly name: string;
  /** What the run was asked. */
  readonly input: string;
  readonly options?: AssemblyAskOptions;
  /** The assembly's work, from start to response. */
  perform(execution: AssemblyExecution): Promise<AssemblyPerformed>;
}

const askOptionKeys: ReadonlySet<string> = new Set([
  'signal',
  'timeoutMs',
  'deadline',
  'actorId',
  'context',
  'metadata',
  'runtime',
  'includeAgentEvents',
]);

/** How deep agents may nest below an assembly's steps, as an agent's default `maxDepth`. */
const assemblyMaxDepth = 8;

/**
 * Makes a {@link Run} whose entrypoint is an assembly of agents (a Workflow, Swarm or Graph)
 * instead of one agent: the Run an agent's `createRun` makes, with the same outcomes, events,
 * cleanup and usage (summed over every step's agent). For packages that define assemblies, such
 * as `@ghost/assemblies`.
 *
 * @example
 * ```ts
 * const run = createAssemblyRun({
 *   name: 'pipeline',
 *   input: 'Lisbon',
 *   async perform(execution) {
 *     const { result } = await execution.runAgent(researcher, 'Lisbon', { path: ['step:research'] });
 *     return { text: result.text, steps: [] };
 *   },
 * });
 * await run.execute();
 * ```
 */
export function createAssemblyRun(init: AssemblyRunInit): Run {
  const { name, options = {} } = init;
  if (typeof name !== 'string' || name.trim() === '') {
    throw new ConfigurationError('An assembly needs a non-empty name.', { code: 'AGENT_NAME_INVALID' });
  }
  if (typeof init.input !== 'string') {
    throw new ConfigurationError(`Assembly '${name}' takes its input as a string.`, {
      code: 'AGENT_INPUT_INVALID',
    });
  }
  if (typeof options !== 'object' || options === null) {
    throw new ConfigurationError('ask() takes an options object or nothing.', {
      code: 'AGENT_OPTION_INVALID',
    });
  }
  for (const key of Object.keys(options)) {
    if (!askOptionKeys.has(key)) {
      throw new ConfigurationError(
        `ask() of assembly '${name}' has no option '${key}'. Known options: ${[...askOptionKeys].join(', ')}.`,
        { code: 'OPTION_UNKNOWN', option: key },
      );
    }
  }
  if (options.includeAgentEvents !== undefined && typeof options.includeAgentEvents !== 'boolean') {
    throw new ConfigurationError('ask() option includeAgentEvents must be true or false.', {
      code: 'AGENT_OPTION_INVALID',
      option: 'includeAgentEvents',
    });
  }
  const runtime = options.runtime ?? defaultRuntime();
  const invocation: Invocation = Object.freeze({
    invocationId: randomUUID(),
    runId: randomUUID(),
    agentName: name,
    input: init.input,
    actorId: options.actorId,
    sessionId: undefined,
    context: Object.freeze({ ...options.context }),
    metadata: Object.freeze({ ...options.metadata }),
    deadline: resolveDeadline(options),
  });
  return new Run({
    invocation,
    runtime,
    signal: options.signal,
    telemetry: runtime.telemetry,
    includeAgentEvents: options.includeAgentEvents === true,
    entrypoint: {
      agentName: name,
      kind: 'assembly',
      inputLength: 1,
      async execute(execution) {
        // The steps' agents run nested in the assembly as in an agent's tool call.
        bindInvocationScope(execution, {
          agentName: name,
          budget: new ToolCallBudget(Number.POSITIVE_INFINITY, { agentName: name }),
          maxDepth: assemblyMaxDepth,
        });
        const { runContext } = execution;
        const performed = await init.perform({
          assemblyName: name,
          runContext,
          signal: execution.signal,
          emit: (type, data) => execution.emit(type, data),
          inStep: (stepId, work) => execution.inScope({ kind: 'step', stepId }, work),
          runAgent: (agent, input, agentOptions) =>
            runNestedAgent(runContext, {
              agent,
              input,
              placement: agentOptions.path,
              receivesInterjections: true,
              ...(agentOptions.signal ? { signal: agentOptions.signal } : {}),
              ...(agentOptions.context ? { context: agentOptions.context } : {}),
              ...(agentOptions.tools ? { tools: agentOptions.tools } : {}),
            }),
        });
        return {
          text: performed.text,
          turns: 0,
          toolCalls: 0,
          messages: [],
          steps: Object.freeze([...performed.steps]),
          ...(performed.output !== undefined ? { output: performed.output } : {}),
        };
      },
    },
  });
}
