import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  GhostError,
  type Runtime,
  type SandboxBackendV1,
  type SandboxCapabilities,
  type SandboxLimits,
  type SandboxProcess,
  SandboxUnavailableError,
} from '@ghost/core';
import type { CodeModeLimits } from './limits.js';
import { unrestrictedSandbox } from './unrestricted-sandbox.js';

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
}

// The directory of the Node binary hosts run with, resolved once per process.
let nodeDirectory: Promise<string> | undefined;

/** How code mode names a sandbox: a registered name, `'native'`, `'unrestricted'`, or a backend. */
export type SandboxChoice = string | SandboxBackendV1;

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
): Promise<SandboxFactory> {
  const backend = await findBackend(choice, runtime);
  const detection = await backend.detect();
  if (!detection.available) {
    throw new SandboxUnavailableError(
      `Sandbox '${backend.name}' cannot contain programs on this machine: ${detection.reason ?? 'its detect() gave no reason'}.`,
      { details: { sandbox: backend.name } },
    );
  }
  const { capabilities } = detection;
  const isUnrestricted = backend === unrestrictedSandbox;
  if (!isUnrestricted && !capabilities.processTreeOwnership && !capabilities.subprocessDenial) {
    throw new SandboxUnavailableError(
      `Sandbox '${backend.name}' neither owns the program's process tree nor denies subprocesses here, so a program could leave processes behind. Use a backend that does one of them.`,
      { details: { sandbox: backend.name } },
    );
  }
  const spawnLimits = enforceableLimits(limits, capabilities);
  nodeDirectory ??= realpath(process.execPath).then(dirname);
  const runtimeNode = await nodeDirectory;
  return Object.freeze({
    name: backend.name,
    backend,
    capabilities,
    async spawn(command: SandboxedCommand) {
      const workspace = await mkdtemp(join(runtime.workspaceRoot, 'ghost-program-'));
      try {
        return await backend.spawn({
          command: command.command,
          args: command.args,
          env: command.env ?? {},
          runtimePaths: [runtimeNode, ...command.runtimePaths],
          workspace,
          // A backend that cannot isolate the network would refuse 'none'; only 'unrestricted' gets here.
          network: capabilities.networkIsolation ? 'none' : 'host',
          extraFds: 1,
          limits: spawnLimits,
          ...(command.signal ? { signal: command.signal } : {}),
        });
      } catch (error) {
        await rm(workspace, { recursive: true, force: true });
        if (GhostError.isInstance(error)) throw error;
        throw new SandboxUnavailableError(
          `Sandbox '${backend.name}' could not start the engine host: ${(error as Error).message}`,
          { cause: error },
        );
      }
    },
  });
}

/**
 * The limits to hand the backend: the ones it says it enforces. Not the wall clock: a host is
 * started ahead of its program, so the session's watchdog counts `wallSeconds` from `exec`.
 */
function enforceableLimits(limits: CodeModeLimits, capabilities: SandboxCapabilities): SandboxLimits {
  return {
    ...(capabilities.memoryLimit ? { memoryBytes: limits.memoryBytes } : {}),
    ...(capabilities.cpuLimit ? { cpuSeconds: limits.cpuSeconds } : {}),
    ...(capabilities.fileSizeLimit ? { fileBytes: limits.fileBytes } : {}),
  };
}
