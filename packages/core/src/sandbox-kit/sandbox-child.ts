import type { ChildProcess } from 'node:child_process';
import { SandboxUnavailableError } from '../errors.js';
import { nodeChildProcess } from '../lazy-builtins.js';
import type { SandboxSpawnPlan } from './sandbox-spawn-plan.js';

/** How {@link startSandboxChild} starts the process: usually a launcher wrapping the plan's command. */
export interface SandboxChildLaunch {
  /** The backend's name, for error messages. */
  readonly backend: string;
  /** The program to execute: the plan's command itself, or a launcher that wraps it. */
  readonly command: string;
  readonly args: readonly string[];
  /** The launcher's environment. Default: the plan's `env`, so the program sees exactly that. */
  readonly env?: Readonly<Record<string, string>>;
  /** The launcher's working directory. Default: the plan's `cwd`. */
  readonly cwd?: string;
}

/**
 * Starts a sandboxed child for a checked plan and resolves once the operating system has started
 * it, with stdin ignored, stdout and stderr piped, and one pipe for each of the plan's `extraFds`
 * at fd 3 and on. The child leads its own process group (`detached`), so
 * {@link processGroupTree} reaches what it starts. Errors the pipes and the child emit later are
 * swallowed here (a pipe whose far end dies emits EPIPE), so a dying child never crashes the
 * parent; `exited` reports how it ended.
 *
 * @throws SandboxUnavailableError naming the command when it cannot be started (missing, not
 *   executable); nothing is left running and the workspace is left to the caller.
 *
 * @example
 * ```ts
 * const child = await startSandboxChild(plan, {
 *   backend: 'prlimit',
 *   command: '/usr/bin/prlimit',
 *   args: [`--cpu=${plan.limits.cpuSeconds}`, '--', plan.command, ...plan.args],
 * });
 * ```
 */
export function startSandboxChild(plan: SandboxSpawnPlan, launch: SandboxChildLaunch): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = nodeChildProcess().spawn(launch.command, [...launch.args], {
        env: launch.env ?? plan.env,
        cwd: launch.cwd ?? plan.cwd,
        // Its own process group, so one kill(-pid) reaches every descendant that stays in it.
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe', ...Array.from({ length: plan.extraFds }, () => 'pipe' as const)],
      });
    } catch (error) {
      reject(startFailure(launch, error));
      return;
    }
    const onSpawn = () => {
      child.off('error', onError);
      ignoreLaterErrors(child);
      resolve(child);
    };
    const onError = (error: Error) => {
      child.off('spawn', onSpawn);
      // Node opened the pipes before exec failed; close them so nothing is left behind.
      for (const stream of child.stdio) stream?.destroy();
      reject(startFailure(launch, error));
    };
    child.once('spawn', onSpawn);
    child.once('error', onError);
  });
}

/**
 * Adds a listener that ignores errors to the child and each of its pipes. A pipe whose far end dies
 * mid-transfer emits EPIPE or ECONNRESET; that is the sandbox ending, which `exited` reports, not
 * an error to crash the parent with. Listeners the caller adds still receive the error.
 */
export function ignoreLaterErrors(child: ChildProcess): void {
  child.on('error', ignore);
  for (const stream of child.stdio) stream?.on('error', ignore);
}

function startFailure(launch: SandboxChildLaunch, error: unknown): SandboxUnavailableError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return new SandboxUnavailableError(
    `The ${launch.backend} backend could not start ${launch.command}: ${message}. Check that the program exists and is executable.`,
    { cause: error, backend: launch.backend, command: launch.command, systemErrorCode: code },
  );
}

function ignore(): void {}
