import type { Artifact, JsonValue } from '@ghost/core';
import { type EnginePlugin, validatePlugin } from '@ghost/core/plugin';
import type { SandboxCapabilities } from '@ghost/core/sandbox';
import { checkEngineCapabilities, type EngineCapability } from './engine-capability.js';
import { CodeModeConfigurationError } from './errors.js';
import type { CodeModeLimits } from './limits.js';
import type { SandboxFactory } from './parent/sandbox-factory.js';
import type { ToolBroker } from './tool-broker.js';
import type { ToolCatalog } from './tool-catalog.js';

/** Where a program's status stands after an `exec`, `wait` or `stop`. */
export type ProgramStatus = 'still_working' | 'completed' | 'error' | 'terminated';

/**
 * What `exec`, `wait` and `stop` return. `still_working` means the program is running: call
 * `wait` again or `stop` it. `completed`, `error` and `terminated` are final.
 */
export interface ProgramResult {
  readonly status: ProgramStatus;
  /** Output produced since the previous observation (text, console), possibly truncated. */
  readonly output: string;
  /** The program's completed value: its completion value (as `eval` gives it), or what it passed to `exit`/`finish`. */
  readonly value?: JsonValue;
  /** Why the program failed, when `status` is `error`. */
  readonly error?: string;
  /** Artifacts of the tool calls made since the previous observation; they go to the model. */
  readonly artifacts?: readonly Artifact[];
}

/** Options of one control operation. */
export interface ObserveOptions {
  /** How long to watch the program before answering `still_working`. Default: the session's (60 s). */
  readonly observationWindowMs?: number;
  /** Stops watching (not the program) when aborted, such as when the run is cancelled. */
  readonly signal?: AbortSignal;
  /** The id of the control tool call, so brokered calls name it as their parent. */
  readonly controlCallId?: string;
  /** `execute` only: called once the program is accepted (within the limits), before it runs. */
  readonly onProgramStart?: () => void;
}

/**
 * One run's code-mode session: at most one program at a time, one control operation at a time.
 * It owns every process, workspace, timer and channel it creates and releases them in `close()`.
 */
export interface CodeModeSession {
  /** Starts a program and watches it for up to the observation window. */
  execute(source: string, options?: ObserveOptions): Promise<ProgramResult>;
  /** Watches the running program again; returns only output produced since the last observation. */
  wait(options?: ObserveOptions): Promise<ProgramResult>;
  /** Ends the running program and its process; returns its last output as `terminated`. */
  stop(options?: ObserveOptions): Promise<ProgramResult>;
  /** Ends everything the session owns. Idempotent; rejects with a `CleanupError` when it cannot. */
  close(): Promise<void>;
}

/** What an engine writes its instructions from. */
export interface EngineInstructionsContext {
  readonly catalog: ToolCatalog;
  readonly limits: CodeModeLimits;
  /** The sandbox that will contain the programs, and what it really enforces here. */
  readonly sandbox: { readonly name: string; readonly capabilities: SandboxCapabilities };
}

/**
 * Where programs run:
 * - `'process'` (default): a fresh sandboxed host process for each program, one started ahead;
 * - `'session'`: one sandboxed host process serves the session's programs in turn, each in a
 *   fresh guest (runtime and context); any program that does not complete (an error, a stop, a
 *   limit) retires the host, and so does a host whose own CPU time or memory has grown. Programs
 *   start sooner and cost far less CPU, at the price of sharing a host process between the
 *   programs of one session;
 * - `'thread'`: a worker thread pool in this process, with `sandbox: 'unrestricted'` only.
 */
export type CodeModePlacement = 'process' | 'session' | 'thread';

/** What an engine gets to open a session. */
export interface EngineOpenContext {
  /** Runs the program's tool calls through the agent's pipeline. */
  readonly broker: ToolBroker;
  /** Starts sandboxed processes under code mode's policy. */
  readonly sandbox: SandboxFactory;
  readonly limits: CodeModeLimits;
  readonly catalog: ToolCatalog;
  readonly placement: CodeModePlacement;
  /** How long each observation watches a program. Default 60,000. */
  readonly observationWindowMs: number;
  /** Whether to start the next host before the program arrives. Default true. */
  readonly prewarm: boolean;
}

/**
 * The engine contract (`specificationVersion: 'engine-v1'`): a language, the instructions shown
 * to the model, and `open`, which returns one session per run. One engine serves many sessions
 * concurrently, so all per-program state lives in the session.
 */
export interface EngineV1 extends EnginePlugin {
  /** The language programs are written in, such as `javascript`. */
  readonly language: string;
  /**
   * Absolute paths the engine's host must be able to read inside the sandbox (its code, its wasm
   * or native files). They are visible to the host only, never granted to tools. An engine defined
   * with a function here (`EngineRuntimePaths` in `@ghost/code-mode/engine`) finds them the first
   * time they are read.
   */
  readonly runtimePaths: readonly string[];
  /** The placements the engine supports. */
  readonly placements: readonly CodeModePlacement[];
  /**
   * What the engine can do beyond the contract (see {@link EngineCapability}), such as
   * `['guest-memory-limit']`; `[]` when it can do none of it. Left out, it claims all of them.
   * Code mode reads them at run time (an engine without `'guest-memory-limit'` in a sandbox with
   * no memory limit gets a warning that `limits.memoryBytes` is not enforced), and the
   * conformance suite skips the cases that need what the engine does not declare.
   */
  readonly capabilities?: readonly EngineCapability[];
  /**
   * The least `limits.memoryBytes` the engine runs programs with, in bytes, for an engine whose
   * interpreter needs more memory than most (Pyodide's). A session whose limit is below it is
   * refused with a `CodeModeConfigurationError` (`CODE_MODE_LIMIT_INVALID`) that names the floor.
   * Left out, any limit code mode accepts will do.
   */
  readonly minimumMemoryBytes?: number;
  /** The text that teaches the model to write programs, including the tool declarations. */
  instructions(context: EngineInstructionsContext): string;
  open(context: EngineOpenContext): CodeModeSession | Promise<CodeModeSession>;
}

/**
 * Declares an engine that implements the whole contract itself: its `open()` returns a
 * {@link CodeModeSession} it manages (processes, limits, cleanup). Fills in the plugin fields
 * and checks the shape, so a mistake throws here. An engine whose programs run in a host process
 * is simpler to write with `defineHostEngine`, which supplies the session; see
 * docs/guides/custom-engine.md.
 *
 * @example
 * ```ts
 * export const remoteEngine = defineEngine({
 *   name: 'remote',
 *   language: 'javascript',
 *   runtimePaths: [],
 *   placements: ['process'],
 *   capabilities: ['guest-memory-limit'],
 *   instructions: ({ catalog }) => `Write JavaScript.\n${catalog.declarations}`,
 *   open: (context) => new RemoteSession(context),
 * });
 * ```
 */
export function defineEngine(
  engine: Omit<EngineV1, 'kind' | 'specificationVersion' | 'runtimePaths'> &
    Partial<Pick<EngineV1, 'kind' | 'specificationVersion'>> & { readonly runtimePaths: EngineRuntimePaths },
): EngineV1 {
  const { runtimePaths, ...rest } = engine;
  const complete = { ...rest, kind: 'engine', specificationVersion: 'engine-v1' } as EngineV1;
  Object.defineProperty(complete, 'runtimePaths', {
    enumerable: true,
    get: runtimePathsReader(`Engine '${String(engine.name)}'`, runtimePaths),
  });
  for (const method of ['instructions', 'open'] as const) {
    if (typeof complete[method] !== 'function') {
      throw new CodeModeConfigurationError(`Engine '${String(engine.name)}' needs a ${method}() function.`);
    }
  }
  if (typeof complete.language !== 'string' || complete.language === '') {
    throw new CodeModeConfigurationError(
      `Engine '${String(engine.name)}' needs a language, such as 'javascript'.`,
    );
  }
  const floor = complete.minimumMemoryBytes;
  if (floor !== undefined && !(Number.isSafeInteger(floor) && floor > 0)) {
    throw new CodeModeConfigurationError(
      `Engine '${String(engine.name)}': minimumMemoryBytes must be a positive whole number of bytes, or left out.`,
    );
  }
  if (complete.capabilities !== undefined) {
    const where = `Engine '${String(engine.name)}'`;
    Object.assign(complete, {
      capabilities: Object.freeze([...checkEngineCapabilities(complete.capabilities, where)]),
    });
  }
  validatePlugin(complete, { kind: 'engine' });
  return Object.freeze(complete);
}

/** True when a registered engine plugin implements the full code-mode contract. */
export function isEngineV1(plugin: EnginePlugin): plugin is EngineV1 {
  const candidate = plugin as Partial<EngineV1>;
  return (
    typeof candidate.open === 'function' &&
    typeof candidate.instructions === 'function' &&
    typeof candidate.language === 'string' &&
    hasRuntimePaths(plugin)
  );
}

/**
 * True when `runtimePaths` is a list, or a getter (an engine that finds its paths when a host
 * first starts): checking a plugin must not make it read the file system.
 */
function hasRuntimePaths(plugin: EnginePlugin): boolean {
  for (let owner: object | null = plugin; owner !== null; owner = Object.getPrototypeOf(owner)) {
    const descriptor = Object.getOwnPropertyDescriptor(owner, 'runtimePaths');
    if (descriptor !== undefined)
      return typeof descriptor.get === 'function' || Array.isArray(descriptor.value);
  }
  return false;
}

/**
 * An engine's runtime paths: the list itself, or a function that finds them, called the first
 * time they are needed (when a host first starts) and not again. Finding them walks the engine's
 * dependencies on disk, a cost an application's `import` of the engine then does not pay
 * (docs/decisions/2026-12-07-round-trip-and-imports.md).
 *
 * @example
 * ```ts
 * const runtimePaths: EngineRuntimePaths = () => packageRuntimePaths(packageRoot);
 * ```
 */
export type EngineRuntimePaths = readonly string[] | (() => readonly string[]);

/**
 * Reads `paths` once and checks it is a list of strings (a function's answer is checked when it is
 * called), then answers the same frozen list every time.
 */
export function runtimePathsReader(subject: string, paths: EngineRuntimePaths): () => readonly string[] {
  const check = (value: unknown): readonly string[] => {
    if (!Array.isArray(value) || !value.every((path) => typeof path === 'string')) {
      throw new CodeModeConfigurationError(
        `${subject}: runtimePaths must be a list of absolute paths, or a function returning one (such as () => packageRuntimePaths(packageRoot)).`,
      );
    }
    return Object.isFrozen(value) ? value : Object.freeze([...value]);
  };
  if (typeof paths !== 'function') {
    const checked = check(paths);
    return () => checked;
  }
  let found: readonly string[] | undefined;
  return () => {
    found ??= check(paths());
    return found;
  };
}
