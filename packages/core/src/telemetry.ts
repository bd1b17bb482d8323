import { ConfigurationError } from './errors.js';
import type { ModelRequest } from './model.js';
import type { Invocation } from './run-context.js';
import type { AgentStreamSource, StreamEvent } from './stream-event.js';

/**
 * What telemetry learns about an event beyond the event itself. `hidden` marks events the public
 * stream leaves out: code mode's control calls (`exec`, `wait`, `stop`) and the model's streaming
 * of them, which traces keep so a program's tool calls nest under the control call that ran them.
 */
export interface TelemetryEventDetail {
  /** The event is not in the public stream. */
  readonly hidden?: boolean;
  /** On `model_start`: the request the model is sent (for opt-in content capture). */
  readonly request?: ModelRequest;
  /**
   * On `run_resume`: what this plugin's {@link RunTelemetry.pauseContext} returned when the run
   * paused, so it can link the resumed run to the paused one (a span link).
   */
  readonly pausedContext?: Readonly<Record<string, string>>;
}

/**
 * A unit of work telemetry can make current while it runs: the run, one model turn, one tool call,
 * one assembly step. The matching events (`run_start`, `model_start`, `tool_start`,
 * `assembly_step_start`) come before the scope is entered.
 */
export type TelemetryScope =
  | { readonly kind: 'run' }
  | { readonly kind: 'model'; readonly turn: number }
  | { readonly kind: 'tool'; readonly toolCallId: string }
  /** One attempt of an assembly's step, announced by its `assembly_step_start` (`stepId`). */
  | { readonly kind: 'step'; readonly stepId: string };

/** What a telemetry plugin is told when a run, or an agent nested in one, starts. */
export interface TelemetryRunStart {
  readonly runId: string;
  readonly agentName: string;
  readonly invocation: Invocation;
  /**
   * Set when this is an agent nested in the run (an agent run as a tool): which agent and where,
   * as its `agent_stream` events say. Its events are the agent's own (`invocation_start` to
   * `invocation_stop` or `invocation_error`, the last one); the run's events reach the run's
   * own observer. `undefined` for the run itself.
   */
  readonly source?: AgentStreamSource;
}

/** One run, or one agent nested in it, as a telemetry plugin observes it. */
export interface RunTelemetry {
  /**
   * Every event, in order, hidden ones included. For a run the last is the terminal event; for
   * a nested agent (`start.source` set) it is its `invocation_stop` or `invocation_error`.
   */
  onEvent(event: StreamEvent, detail: TelemetryEventDetail): void;
  /**
   * Runs `work` with the scope current (an OpenTelemetry plugin makes its span the active one), so
   * what `work` does (a tool's HTTP request, a nested agent) is traced beneath it. Must call `work`
   * exactly once and return what it returns.
   */
  runInScope<Result>(scope: TelemetryScope, work: () => Result): Result;
  /**
   * Called when the run suspends (`approvals: 'suspend'`), before its pause is saved: a few
   * strings to keep with the pause (such as the run span's trace and span ids), handed back as
   * `detail.pausedContext` on the resumed run's `run_resume`. Saved in the session store: never
   * secrets. Optional.
   */
  pauseContext?(): Readonly<Record<string, string>> | undefined;
}

/**
 * The telemetry contract (`specificationVersion: 'telemetry-v1'`): `startRun` is called once per
 * run, before its first event, and once for each agent nested in the run (with `start.source`
 * set), where that agent starts, so a plugin that makes the current span its parent nests the
 * agent beneath the tool call that runs it. Pass plugins as `createRuntime({ telemetry })` or
 * `defineAgent({ telemetry })`. A plugin only observes: an exception it throws is ignored, and
 * the run goes on as if it were not there.
 *
 * @example
 * ```ts
 * const logTelemetry: TelemetryV1 = {
 *   specificationVersion: 'telemetry-v1',
 *   name: 'log',
 *   startRun: () => ({
 *     onEvent: (event) => console.log(event.type),
 *     runInScope: (_scope, work) => work(),
 *   }),
 * };
 * ```
 */
export interface TelemetryV1 {
  readonly specificationVersion: 'telemetry-v1';
  /** A name for messages, such as `opentelemetry`. */
  readonly name: string;
  startRun(start: TelemetryRunStart): RunTelemetry;
}

/** Checks a `telemetry` option: one plugin or a list. Throws a `ConfigurationError` naming `where`. */
export function checkTelemetry(value: unknown, where: string): readonly TelemetryV1[] {
  if (value === undefined) return [];
  const plugins = Array.isArray(value) ? value : [value];
  for (const plugin of plugins) {
    const candidate = plugin as Partial<TelemetryV1> | null;
    if (
      typeof candidate !== 'object' ||
      candidate === null ||
      candidate.specificationVersion !== 'telemetry-v1' ||
      typeof candidate.startRun !== 'function'
    ) {
      throw new ConfigurationError(
        `${where}: telemetry must be a telemetry plugin (specificationVersion 'telemetry-v1' with startRun()), such as openTelemetry() from @ghost/otel, or a list of them.`,
        { code: 'TELEMETRY_INVALID' },
      );
    }
  }
  return plugins as readonly TelemetryV1[];
}

/**
 * The run's telemetry, fanned out to every plugin and made safe: a plugin that throws is left out
 * of that call, and each scope's work runs exactly once whatever the plugins do.
 */
export class RunTelemetryFanOut {
  readonly #runs: readonly RunTelemetry[];
  readonly #names: readonly string[];

  constructor(plugins: readonly TelemetryV1[], start: TelemetryRunStart) {
    const runs: RunTelemetry[] = [];
    const names: string[] = [];
    for (const plugin of plugins) {
      try {
        runs.push(plugin.startRun(start));
        names.push(plugin.name);
      } catch {
        // A plugin that cannot start observes nothing of this run.
      }
    }
    this.#runs = runs;
    this.#names = names;
  }

  /** What each plugin keeps with a pause, by plugin name: only strings, at most 16 of 1 KiB each. */
  pauseContexts(): Record<string, Record<string, string>> {
    const contexts: Record<string, Record<string, string>> = {};
    for (const [index, run] of this.#runs.entries()) {
      try {
        const context = run.pauseContext?.();
        if (context === undefined || context === null) continue;
        const entries = Object.entries(context).filter(
          ([key, value]) => typeof value === 'string' && key.length <= 64 && value.length <= 1024,
        );
        if (entries.length > 0) contexts[this.#names[index] ?? ''] = Object.fromEntries(entries.slice(0, 16));
      } catch {
        // A plugin that cannot say keeps nothing.
      }
    }
    return contexts;
  }

  /** `run_resume`, with each plugin's own saved context as `detail.pausedContext`. */
  onResume(event: StreamEvent, contexts: Readonly<Record<string, Readonly<Record<string, string>>>>): void {
    for (const [index, run] of this.#runs.entries()) {
      const pausedContext = Object.hasOwn(contexts, this.#names[index] ?? '')
        ? contexts[this.#names[index] ?? '']
        : undefined;
      try {
        run.onEvent(event, pausedContext === undefined ? {} : { pausedContext });
      } catch {
        // Observation never changes the run.
      }
    }
  }

  get isEmpty(): boolean {
    return this.#runs.length === 0;
  }

  onEvent(event: StreamEvent, detail: TelemetryEventDetail): void {
    for (const run of this.#runs) {
      try {
        run.onEvent(event, detail);
      } catch {
        // Observation never changes the run.
      }
    }
  }

  runInScope<Result>(scope: TelemetryScope, work: () => Result): Result {
    let wrapped = work;
    for (const run of this.#runs) wrapped = scoped(run, scope, wrapped);
    return wrapped();
  }
}

function scoped<Result>(run: RunTelemetry, scope: TelemetryScope, work: () => Result): () => Result {
  return () => {
    let hasStarted = false;
    let result: Result;
    try {
      result = run.runInScope(scope, () => {
        hasStarted = true;
        return work();
      });
    } catch (error) {
      // The work's own failure passes through; a plugin that failed before starting it is skipped.
      if (hasStarted) throw error;
      return work();
    }
    // A plugin that returned without running the work does not get to skip it.
    return hasStarted ? result : work();
  };
}
