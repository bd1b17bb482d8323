import { isAbsolute } from 'node:path';
import {
  type CodeModePlacement,
  type CodeModeSession,
  defineEngine,
  type EngineInstructionsContext,
  type EngineOpenContext,
  type EngineRuntimePaths,
  type EngineV1,
  runtimePathsReader,
} from './engine.js';
import type { EngineCapability } from './engine-capability.js';
import { CodeModeConfigurationError } from './errors.js';
import { openHostSession } from './parent/host-engine.js';

const knownPlacements: readonly CodeModePlacement[] = ['process', 'session', 'thread'];

/**
 * The host an engine's programs run in. The host is the half of the engine that runs inside the
 * sandbox: a script that calls `runProcessHost(driver)` from `@ghost/code-mode/host` with the
 * engine's `EngineDriver`, the one piece that builds guests and runs programs.
 */
export interface HostEngineHost {
  /** The absolute path of the host script, which calls `runProcessHost(driver)`. */
  readonly script: string;
  /**
   * The absolute path of the worker file for `placement: 'thread'`, whose default export is
   * `createThreadTask(driver)`. Needed when `placements` includes `'thread'`.
   */
  readonly threadWorker?: string;
  /**
   * Node options the host needs beyond the permission model (such as `--no-node-snapshot`). A
   * function is called for each session, for options that can change while the process runs.
   */
  readonly nodeOptions?: readonly string[] | (() => readonly string[]);
}

/**
 * What one session's hosts get beyond the engine's definition, as `prepare` decides when the
 * session opens, such as the location of the native addon its check loaded.
 */
export interface HostSessionStart {
  /** Arguments after the host script, such as the path of a native addon the host must load. */
  readonly hostArguments?: readonly string[];
  /** Node options for this session's hosts, in place of `host.nodeOptions`. */
  readonly nodeOptions?: readonly string[];
  /** Absolute paths this session's hosts may also read, such as a file found when the session opened. */
  readonly readPaths?: readonly string[];
}

/** What {@link defineHostEngine} makes an engine from: what it is, and the host it starts. */
export interface HostEngineDefinition {
  /** The name users configure, such as `quickjs`; the host says it in its handshake. */
  readonly name: string;
  /** The language programs are written in, such as `javascript`. */
  readonly language: string;
  /**
   * Absolute paths the host must be able to read inside the sandbox: its code, its wasm or
   * native files, and those of its dependencies (see `packageRuntimePaths`). Never granted to tools.
   * A function (`() => packageRuntimePaths(packageRoot)`) is called when the first host starts,
   * so importing the engine does not walk its dependencies on disk.
   */
  readonly runtimePaths: EngineRuntimePaths;
  /** The placements the engine supports; `'thread'` needs `host.threadWorker`. */
  readonly placements: readonly CodeModePlacement[];
  /**
   * What the engine can do beyond the contract, such as `['guest-memory-limit']` (see
   * `EngineCapability`); `[]` for none. Left out, it claims all of them.
   */
  readonly capabilities?: readonly EngineCapability[];
  /**
   * The least `limits.memoryBytes` the engine runs programs with, in bytes (see
   * `EngineV1.minimumMemoryBytes`); left out, any limit will do.
   */
  readonly minimumMemoryBytes?: number;
  /** The text that teaches the model to write programs, including the tool declarations. */
  instructions(context: EngineInstructionsContext): string;
  readonly host: HostEngineHost;
  /**
   * Runs before each session opens, such as to check that a native addon loads, and may return
   * what this session's hosts get beyond the definition ({@link HostSessionStart}). Throw (a
   * `GhostError` with a stable code) to refuse the session with that error. A `prepare` that
   * returns at once lets the session open synchronously.
   */
  readonly prepare?: (
    context: EngineOpenContext,
  ) => HostSessionStart | undefined | Promise<HostSessionStart | undefined>;
}

/**
 * Declares an engine whose programs run in a host process that code mode starts. The definition
 * says what the engine is and which host to start; code mode supplies the rest: the session's
 * state machine (one program at a time, `execute`/`wait`/`stop`/`close`), prewarming a spare
 * host, the limits, the protocol with the host, placements, and cleanup. `@ghost/engine-quickjs`
 * and `@ghost/engine-v8` are host engines. An engine that manages everything itself uses
 * {@link defineEngine} with its own `open()` instead. See docs/guides/custom-engine.md.
 *
 * @example
 * ```ts
 * export const tinyEngine = defineHostEngine({
 *   name: 'tiny',
 *   language: 'javascript',
 *   runtimePaths: () => packageRuntimePaths(packageRoot),
 *   placements: ['process', 'session'],
 *   capabilities: [], // a fresh context that cannot bound memory
 *   instructions: (context) => javascriptInstructions(context, { interpreter: 'a fresh context' }),
 *   host: { script: fileURLToPath(new URL('./host.js', import.meta.url)) },
 * });
 * ```
 */
export function defineHostEngine(definition: HostEngineDefinition): EngineV1 {
  const {
    name,
    language,
    runtimePaths,
    placements,
    capabilities,
    minimumMemoryBytes,
    instructions,
    host,
    prepare,
  } = definition;
  const subject = `Engine '${String(name)}'`;
  checkHost(subject, host, placements);
  if (prepare !== undefined && typeof prepare !== 'function') {
    throw new CodeModeConfigurationError(`${subject}: prepare must be a function, or left out.`);
  }
  const { script, threadWorker, nodeOptions } = host;
  const readRuntimePaths = runtimePathsReader(subject, runtimePaths);
  const openSession = (context: EngineOpenContext, start: HostSessionStart | undefined): CodeModeSession => {
    const options = start?.nodeOptions ?? (typeof nodeOptions === 'function' ? nodeOptions() : nodeOptions);
    const readPaths = start?.readPaths ?? [];
    const enginePaths = readRuntimePaths();
    return openHostSession(context, {
      engine: name,
      language,
      hostScript: script,
      runtimePaths: readPaths.length === 0 ? enginePaths : [...new Set([...enginePaths, ...readPaths])],
      ...(threadWorker === undefined ? {} : { threadScript: threadWorker }),
      ...(options === undefined ? {} : { nodeOptions: options }),
      ...(start?.hostArguments === undefined ? {} : { hostArguments: start.hostArguments }),
    });
  };
  const open = (context: EngineOpenContext): CodeModeSession | Promise<CodeModeSession> => {
    const start = prepare?.(context);
    return start instanceof Promise
      ? start.then((started) => openSession(context, started))
      : openSession(context, start);
  };
  return defineEngine({
    name,
    language,
    runtimePaths: readRuntimePaths,
    placements,
    ...(capabilities === undefined ? {} : { capabilities }),
    ...(minimumMemoryBytes === undefined ? {} : { minimumMemoryBytes }),
    instructions,
    open,
  });
}

function checkHost(subject: string, host: unknown, placements: unknown): asserts host is HostEngineHost {
  if (typeof host !== 'object' || host === null) {
    throw new CodeModeConfigurationError(
      `${subject} needs host: { script }, the absolute path of its host script (which calls runProcessHost(driver)).`,
    );
  }
  const { script, threadWorker, nodeOptions } = host as Record<string, unknown>;
  if (typeof script !== 'string' || !isAbsolute(script)) {
    throw new CodeModeConfigurationError(
      `${subject}: host.script must be the absolute path of the host script, got ${JSON.stringify(script)}.`,
    );
  }
  if (threadWorker !== undefined && (typeof threadWorker !== 'string' || !isAbsolute(threadWorker))) {
    throw new CodeModeConfigurationError(
      `${subject}: host.threadWorker must be the absolute path of the thread worker file, got ${JSON.stringify(threadWorker)}.`,
    );
  }
  if (nodeOptions !== undefined && typeof nodeOptions !== 'function' && !isStringList(nodeOptions)) {
    throw new CodeModeConfigurationError(
      `${subject}: host.nodeOptions must be a list of Node options, or a function returning one.`,
    );
  }
  if (
    !Array.isArray(placements) ||
    placements.length === 0 ||
    !placements.every((placement) => knownPlacements.includes(placement))
  ) {
    throw new CodeModeConfigurationError(
      `${subject}: placements must list one or more of 'process', 'session' and 'thread', got ${JSON.stringify(placements)}.`,
    );
  }
  if (placements.includes('thread') && threadWorker === undefined) {
    throw new CodeModeConfigurationError(
      `${subject} lists the 'thread' placement but has no host.threadWorker: give the worker file, or drop 'thread'.`,
    );
  }
}

function isStringList(value: unknown): boolean {
  return Array.isArray(value) && value.every((each) => typeof each === 'string');
}
