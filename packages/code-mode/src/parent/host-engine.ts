import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import type * as PiscinaModule from 'piscina';
import type { CodeModeSession, EngineOpenContext } from '../engine.js';
import { CodeModeConfigurationError } from '../errors.js';
import {
  type GuestToolEntry,
  type HostLimits,
  type HostReuse,
  noRehearsalArgument,
} from '../shared/protocol.js';
import { type HostLauncher, launchProcessHost } from './host-link.js';
import { HostSession } from './host-session.js';
import { nodePermissionFlag } from './node-permission-flag.js';
import { hostCpuAllowanceSeconds, hostMemoryAllowanceBytes } from './sandbox-factory.js';
import { launchThreadHost } from './thread-host-link.js';
import { requireContainablePlacement } from './thread-placement.js';

/** How a JavaScript engine's host is started. */
export interface HostEngineOptions {
  /** The engine's name, as its host says in the handshake. */
  readonly engine: string;
  /**
   * The language of its programs. Default `'javascript'`, which the session parses and rewrites
   * (see `prepareProgramSource`); another language's programs reach the host as written.
   */
  readonly language?: string;
  /** The absolute path of the host script, which calls `runProcessHost(driver)`. */
  readonly hostScript: string;
  /**
   * Arguments after the host script, for what the host must know before its handshake (such as
   * where a native dependency is installed). Process placements only.
   */
  readonly hostArguments?: readonly string[];
  /** Node options the host needs beyond the permission model (such as `--no-node-snapshot`). */
  readonly nodeOptions?: readonly string[];
  /** Paths the host reads: the engine's code and files, and those of its dependencies. */
  readonly runtimePaths: readonly string[];
  /**
   * The absolute path of the worker file for `placement: 'thread'`, whose default export is
   * `createThreadTask(driver)`. Without it the engine supports the process placement only.
   */
  readonly threadScript?: string;
}

/**
 * Opens a session for an engine that runs in a host process: each program gets a fresh host
 * started through the sandbox, under Node's permission model with read access to its runtime
 * paths only, and the next host is started ahead of time. With `placement: 'session'` a host
 * serves the session's programs in turn while they complete, each in a fresh guest. With
 * `placement: 'thread'` programs run in worker threads of this process, and only with the
 * `'unrestricted'` sandbox: any other throws a `CodeModeConfigurationError`
 * (`CODE_MODE_THREAD_NEEDS_UNRESTRICTED`), since no sandbox reaches into this process.
 *
 * @example
 * ```ts
 * open: (context) => openHostSession(context, { engine: 'quickjs', hostScript, runtimePaths }),
 * ```
 */
export function openHostSession(context: EngineOpenContext, options: HostEngineOptions): CodeModeSession {
  requireContainablePlacement(context.placement, context.sandbox.name, `Engine '${options.engine}'`);
  const tools = context.catalog.toJSON();
  const limits = hostLimits(context);
  if (context.placement === 'thread') return openThreadSession(context, options, tools, limits);
  const args = [
    nodePermissionFlag(),
    ...options.runtimePaths.map((path) => `--allow-fs-read=${path}`),
    '--no-warnings',
    ...(options.nodeOptions ?? []),
    options.hostScript,
    ...(options.hostArguments ?? []),
  ];
  const { sandbox, placement } = context;
  const launch: HostLauncher = (purpose) =>
    launchProcessHost({
      sandbox,
      engine: options.engine,
      tools,
      limits,
      command: {
        command: process.execPath,
        args: purpose === 'spare' ? args : [...args, noRehearsalArgument],
        runtimePaths: options.runtimePaths,
      },
      ...(placement === 'session' ? { reuse: sessionHostReuse } : {}),
    });
  // Spares come from the runtime's pool, shared with the sessions that would start this very host.
  const hostKey = JSON.stringify({
    engine: options.engine,
    args,
    runtimePaths: options.runtimePaths,
    tools,
    limits,
    placement,
  });
  const spares = context.prewarm ? sandbox.joinSpareHosts?.(hostKey, launch) : undefined;
  return new HostSession({
    broker: context.broker,
    limits: context.limits,
    observationWindowMs: context.observationWindowMs,
    prewarm: context.prewarm,
    launch,
    ...(spares ? { spares } : {}),
    isJavaScript: (options.language ?? 'javascript') === 'javascript',
  });
}

function openThreadSession(
  context: EngineOpenContext,
  options: HostEngineOptions,
  tools: readonly GuestToolEntry[],
  limits: HostLimits,
): CodeModeSession {
  if (options.threadScript === undefined) {
    throw new CodeModeConfigurationError(
      `Engine '${options.engine}' has no thread host; use placement 'process'.`,
    );
  }
  // piscina loads only for this placement, not when code mode is imported (see
  // docs/decisions/2026-12-04-import-and-session-open-time.md); its CommonJS build is the one its
  // ES module wrapper re-exports, so this is the same instance an `import 'piscina'` gets.
  const { Piscina } = createRequire(import.meta.url)('piscina') as typeof PiscinaModule;
  // One running program and one spare: the session's own pool, destroyed when it closes.
  const pool = new Piscina({
    filename: pathToFileURL(options.threadScript).href,
    minThreads: context.prewarm ? 2 : 1,
    maxThreads: 2,
    idleTimeout: 60_000,
    // Workers load the engine's built files with plain Node, whatever flags and loaders this
    // process was started with (a test runner's, say).
    execArgv: [],
  });
  return new HostSession({
    broker: context.broker,
    limits: context.limits,
    observationWindowMs: context.observationWindowMs,
    prewarm: context.prewarm,
    launch: () => launchThreadHost({ pool, tools, limits }),
    release: () => pool.destroy(),
  });
}

/**
 * How long a `placement: 'session'` host serves. The sandbox's CPU and memory limits count the
 * whole host process, with an allowance over the program's own (see `sandbox-factory.ts`). A
 * host retires before it has used half of the CPU allowance, or while its resident memory still
 * leaves a quarter of the memory allowance, so what earlier programs used never counts against
 * the one running.
 */
const sessionHostReuse: HostReuse = {
  cpuSeconds: hostCpuAllowanceSeconds / 2,
  residentBytes: (hostMemoryAllowanceBytes * 3) / 4,
};

/** The limits the host enforces itself. */
export function hostLimits(context: Pick<EngineOpenContext, 'limits'>): HostLimits {
  const { outputBytes, memoryBytes, cpuSeconds, wallSeconds, toolCalls } = context.limits;
  return { outputBytes, memoryBytes, cpuSeconds, wallSeconds, toolCalls };
}
