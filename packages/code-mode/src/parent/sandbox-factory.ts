import { GhostError, type Runtime, type SandboxBackendV1, SandboxUnavailableError } from '@ghost/core';
import type { SandboxCapabilities, SandboxLimits, SandboxProcess } from '@ghost/core/sandbox';
import { createSandboxWorkspace, removeSandboxWorkspace } from '@ghost/core/sandbox';
import { unrestrictedSandbox } from '@ghost/sandbox-unrestricted';
import { CodeModeConfigurationError } from '../errors.js';
import type { CodeModeLimits } from '../limits.js';
import type { HostLauncher } from './host-link.js';
import { defaultSpareHosts, SpareHostPools, type SpareHosts } from './spare-host-pool.js';

/** What an engine asks the factory to start. */
export interface SandboxedCommand {
  /** An absolute path; for JavaScript engines, `process.execPath`. */
  readonly command: string;
  readonly args: readonly string[];
  /** The whole environment of the process; empty by default. */
  readonly env?: Readonly<Record<string, string>>;
  /** Read-only paths the process needs besides the command's own directory. */
  readonly runtimePaths: readonly string[];
  readonly signal?: AbortSignal;
}

/**
 * Starts processes under code mode's policy on one backend: a fresh private workspace each, no
 * network where the backend can isolate it, and every limit the backend can enforce. Engines get
 * one in their open context and never pick confinement themselves.
 */
export interface SandboxFactory {
  /** The backend's name, such as `bwrap` or `unrestricted`. */
  readonly name: string;
  readonly backend: SandboxBackendV1;
  /** What the backend enforces on this machine, as its `detect()` reported. */
  readonly capabilities: SandboxCapabilities;
  /** Starts a process; its `close()` removes the workspace. */
  spawn(command: SandboxedCommand): Promise<SandboxProcess>;
  /**
   * Joins a session to the runtime's pool of spare hosts for one kind of host: `hostKey` says
   * everything about the host beyond this factory's policy (engine, command, tools, limits,
   * placement), and `launch` starts one through this factory. Sessions of the same runtime whose
   * factory policy and `hostKey` are equal share the pool; a spare, once taken, is the taker's
   * alone. Absent on factories made without a runtime's pools: each session then starts its own.
   * Code mode's own wiring (`openHostSession` calls it), not for engines to call.
   *
   * @internal
   */
  joinSpareHosts?(hostKey: string, launch: HostLauncher): SpareHosts;
}

/** The options of {@link createSandboxFactory} beyond the sandbox, runtime and limits. */
export interface SandboxFactoryOptions {
  /**
   * How many spare hosts each of the runtime's pools keeps at most. Default 2; 0 starts no host
   * ahead of its program.
   */
  readonly spareHosts?: number;
}

/** Where a runtime keeps code mode's spare-host pools (see `runtime.resource()`). */
const spareHostPoolsKey = Symbol.for('@ghost/code-mode:spare-host-pools');

/** A number per backend object, so two backends of the same name never share a pool. */
const backendNumbers = new WeakMap<SandboxBackendV1, number>();
let nextBackendNumber = 0;

function backendNumber(backend: SandboxBackendV1): number {
  let number = backendNumbers.get(backend);
  if (number === undefined) {
    nextBackendNumber += 1;
    number = nextBackendNumber;
    backendNumbers.set(backend, number);
  }
  return number;
}

/** Checks `spareHosts`: a whole number from 0 to 64. */
export function checkSpareHosts(value: unknown, where: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 64) {
    throw new CodeModeConfigurationError(
      `${where}: spareHosts is how many engine hosts to keep started ahead, a whole number from 0 to 64 (default ${defaultSpareHosts}).`,
      { option: 'spareHosts' },
    );
  }
  return value;
}

/**
 * Memory a host needs beyond the program's own `memoryBytes`: Node itself, the engine and its
 * wasm or isolate overhead (a QuickJS host idles at about 70 MiB). The OS limit is the sum, so the
 * engine's own limit is hit first and the OS limit only catches what slips past it.
 */
export const hostMemoryAllowanceBytes = 160 * 1024 * 1024;

/**
 * CPU a host spends outside the program (Node's start, the engine's set-up). RLIMIT_CPU counts the
 * whole process, so the OS limit leaves this much room and the engine's interrupt, which counts
 * only the program, reports the limit first; the OS kills a host whose engine failed to.
 */
export const hostCpuAllowanceSeconds = 3;

/** A host needs a few dozen descriptors (Node's event loop, the channel, the engine's files). */
const hostOpenFiles = 256;

/** Node runs a dozen threads and the pids limit counts threads; this leaves room and stops a bomb. */
const hostProcesses = 64;

/** How code mode names a sandbox: a registered name, `'native'`, `'unrestricted'`, or a backend. */
export type SandboxChoice = string | SandboxBackendV1;

/** The name a sandbox choice goes by, before it is resolved. */
export function sandboxName(choice: SandboxChoice): string {
  return typeof choice === 'string' ? choice : choice.name;
}

async function findBackend(choice: SandboxChoice, runtime: Runtime): Promise<SandboxBackendV1> {
  if (typeof choice !== 'string') return choice;
  if (choice === unrestrictedSandbox.name) return unrestrictedSandbox;
  try {
    return await runtime.registry.sandbox(choice);
  } catch (error) {
    if (choice !== 'native' || SandboxUnavailableError.isInstance(error)) throw error;
    throw new SandboxUnavailableError(
      `Code mode needs the native sandbox, but none is installed: ${(error as Error).message} Install the backend for this platform, or set sandbox: 'unrestricted' explicitly to run programs with no containment.`,
      { cause: error },
    );
  }
}

/**
 * Resolves and checks the sandbox code mode will use. Fails closed: a backend that is unavailable
 * here, or one that can neither own the process tree nor deny subprocesses, is refused with a
 * `SandboxUnavailableError` whose message says why. Only `'unrestricted'`, named explicitly, runs
 * without containment.
 */
export async function createSandboxFactory(
  choice: SandboxChoice,
  runtime: Runtime,
  limits: CodeModeLimits,
  options: SandboxFactoryOptions = {},
): Promise<SandboxFactory> {
  const spareHosts = checkSpareHosts(options.spareHosts, 'createSandboxFactory()') ?? defaultSpareHosts;
  const backend = await findBackend(choice, runtime);
  const detection = await backend.detect();
  if (!detection.available) {
    throw new SandboxUnavailableError(
      `Sandbox '${backend.name}' cannot contain programs on this machine: ${(detection.reason ?? 'its detect() gave no reason').replace(/\.?$/, '.')}`,
      { backend: backend.name },
    );
  }
  const { capabilities } = detection;
  const isUnrestricted = backend === unrestrictedSandbox;
  if (!isUnrestricted && !capabilities.processTreeOwnership && !capabilities.subprocessDenial) {
    throw new SandboxUnavailableError(
      `Sandbox '${backend.name}' neither owns the program's process tree nor denies subprocesses here, so a program could leave processes behind. Use a backend that does one of them.`,
      { backend: backend.name },
    );
  }
  const spawnLimits = enforceableLimits(limits, capabilities);
  // Everything that makes this factory's processes differ from another's on the same runtime.
  const policyKey = JSON.stringify({
    backend: backendNumber(backend),
    limits: spawnLimits,
    network: capabilities.networkIsolation,
    subprocesses: capabilities.subprocessDenial,
    spareHosts,
  });
  // Taken now, so a closed runtime fails the session's opening rather than its first program.
  const pools = runtime.resource(spareHostPoolsKey, () => new SpareHostPools());
  return Object.freeze({
    name: backend.name,
    backend,
    capabilities,
    async spawn(command: SandboxedCommand) {
      // The kit's workspace: private to this user, and removed by the reaper should this process die.
      const workspace = await createSandboxWorkspace({
        root: runtime.workspaceRoot,
        prefix: 'ghost-program-',
      });
      try {
        return await backend.spawn({
          command: command.command,
          args: command.args,
          env: command.env ?? {},
          runtimePaths: command.runtimePaths,
          workspace,
          // A backend that cannot isolate the network would refuse 'none'; only 'unrestricted' gets here.
          network: capabilities.networkIsolation ? 'none' : 'shared',
          // A host never starts a process; where the backend can forbid it, it is forbidden.
          subprocesses: capabilities.subprocessDenial ? 'deny' : 'allow',
          extraFds: 1,
          limits: spawnLimits,
          ...(command.signal ? { signal: command.signal } : {}),
        });
      } catch (error) {
        await removeSandboxWorkspace(workspace);
        if (GhostError.isInstance(error)) throw error;
        throw new SandboxUnavailableError(
          `Sandbox '${backend.name}' could not start the engine host: ${(error as Error).message}`,
          { cause: error },
        );
      }
    },
    joinSpareHosts(hostKey: string, launch: HostLauncher): SpareHosts {
      // node:crypto is loaded here, not at import (docs/decisions/2026-12-07-round-trip-and-imports.md).
      const { createHash } = process.getBuiltinModule('node:crypto');
      const key = createHash('sha256').update(policyKey).update('\0').update(hostKey).digest('hex');
      return pools.pool(key, launch, spareHosts).join();
    },
  });
}

/**
 * The limits to hand the backend: the ones it says it enforces. Not the wall clock: a host is
 * started ahead of its program, so the session's watchdog counts `wallSeconds` from `exec`.
 */
function enforceableLimits(limits: CodeModeLimits, capabilities: SandboxCapabilities): SandboxLimits {
  return {
    ...(capabilities.memoryLimit ? { memoryBytes: limits.memoryBytes + hostMemoryAllowanceBytes } : {}),
    ...(capabilities.cpuLimit ? { cpuSeconds: limits.cpuSeconds + hostCpuAllowanceSeconds } : {}),
    ...(capabilities.fileSizeLimit ? { fileBytes: limits.fileBytes } : {}),
    ...(capabilities.openFilesLimit ? { openFiles: hostOpenFiles } : {}),
    ...(capabilities.processLimit ? { processes: hostProcesses } : {}),
  };
}
