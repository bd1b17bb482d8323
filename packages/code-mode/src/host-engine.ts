import type { CodeModeSession, EngineOpenContext } from './engine.js';
import { CodeModeConfigurationError } from './errors.js';
import { launchProcessHost } from './host-link.js';
import { HostSession } from './host-session.js';
import type { GuestToolEntry, HostLimits } from './protocol.js';

/** How a JavaScript engine's host is started. */
export interface HostEngineOptions {
  /** The engine's name, as its host says in the handshake. */
  readonly engine: string;
  /** The absolute path of the host script, which calls `runProcessHost(driver)`. */
  readonly hostScript: string;
  /** Node options the host needs beyond the permission model (such as `--no-node-snapshot`). */
  readonly nodeOptions?: readonly string[];
  /** Paths the host reads: the engine's code and files, and those of its dependencies. */
  readonly runtimePaths: readonly string[];
}

/**
 * Opens a session for an engine that runs in a host process: each program gets a fresh host
 * started through the sandbox, under Node's permission model with read access to its runtime
 * paths only, and the next host is started ahead of time.
 *
 * @example
 * ```ts
 * open: (context) => openHostSession(context, { engine: 'quickjs', hostScript, runtimePaths }),
 * ```
 */
export function openHostSession(context: EngineOpenContext, options: HostEngineOptions): CodeModeSession {
  if (context.placement !== 'process') {
    throw new CodeModeConfigurationError(
      `Engine '${options.engine}' runs programs in a host process; placement '${context.placement}' needs a thread host.`,
    );
  }
  const tools = guestTools(context);
  const limits = hostLimits(context);
  const args = [
    '--experimental-permission',
    ...options.runtimePaths.map((path) => `--allow-fs-read=${path}`),
    '--no-warnings',
    ...(options.nodeOptions ?? []),
    options.hostScript,
  ];
  return new HostSession({
    broker: context.broker,
    limits: context.limits,
    observationWindowMs: context.observationWindowMs,
    prewarm: context.prewarm,
    launch: () =>
      launchProcessHost({
        sandbox: context.sandbox,
        engine: options.engine,
        tools,
        limits,
        command: { command: process.execPath, args, runtimePaths: options.runtimePaths },
      }),
  });
}

/** The catalog as the guest sees it. */
export function guestTools(context: Pick<EngineOpenContext, 'catalog'>): GuestToolEntry[] {
  return context.catalog.tools.map((tool) => ({
    name: tool.name,
    identifier: tool.identifier,
    description: tool.description,
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
  }));
}

/** The limits the host enforces itself. */
export function hostLimits(context: Pick<EngineOpenContext, 'limits'>): HostLimits {
  const { outputBytes, memoryBytes, cpuSeconds, wallSeconds } = context.limits;
  return { outputBytes, memoryBytes, cpuSeconds, wallSeconds };
}
