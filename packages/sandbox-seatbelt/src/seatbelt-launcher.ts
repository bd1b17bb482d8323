import { ConfigurationError, type SandboxLimits } from '@ghost/core/sandbox';

/**
 * The shell that applies the rlimits before anything else runs. macOS has no `prlimit(1)`, and
 * Node cannot call `setrlimit(2)`, so a POSIX shell's `ulimit` sets them and then `exec`s; the
 * limits survive every later `exec` (of `env`, `sandbox-exec` and the program).
 */
export const launcherShellPath = '/bin/sh';

/** Starts the program with exactly the environment it is given, by absolute path. */
const environmentProgramPath = '/usr/bin/env';

/** The exit status of the launcher when the shell refused a limit; the message goes to stderr. */
export const launcherFailureStatus = 125;

/** `$0` of the launcher shell, which it names itself by in its messages. */
const launcherName = 'ghost-seatbelt-launcher';

/** `ulimit -f` counts 512-byte blocks in every POSIX shell (`sh` on macOS is bash in POSIX mode). */
const fileSizeBlockBytes = 512;

/** What {@link seatbeltLaunch} starts: the program the kit spawns, with its arguments. */
export interface SeatbeltLaunch {
  readonly command: string;
  readonly args: readonly string[];
}

/**
 * The command line that starts `sandbox-exec` with the plan's rlimits already applied:
 *
 * `/bin/sh -c '<ulimit …>; exec "$@"' ghost-seatbelt-launcher /usr/bin/env -i -- NAME=value… <sandbox-exec> <its arguments>`
 *
 * The script holds only integers the code wrote; every string (environment, profile, command,
 * arguments) reaches the shell as a positional parameter, which the shell passes on unread, so no
 * value is ever parsed as shell text. `env -i` replaces the shell's environment (a shell exports
 * `PWD`, and bash `SHLVL` and `_`) with exactly `environment`, so the program sees the spec's
 * environment and nothing else. The shell, `env` and `sandbox-exec` each `exec` the next, so the
 * process the kit started ends up being the program itself, and its exit and signals are the
 * program's.
 */
export function seatbeltLaunch(
  limits: SandboxLimits,
  environment: Readonly<Record<string, string>>,
  sandboxExec: string,
  sandboxExecArguments: readonly string[],
): SeatbeltLaunch {
  return {
    command: launcherShellPath,
    args: [
      '-c',
      rlimitScript(limits),
      launcherName,
      environmentProgramPath,
      '-i',
      // After `--` every NAME=value is an assignment, even one whose name starts with '-'.
      '--',
      ...Object.entries(environment).map(([name, value]) => `${name}=${value}`),
      sandboxExec,
      ...sandboxExecArguments,
    ],
  };
}

/**
 * The launcher script for `limits`: each rlimit asked for, then no core file, then `exec "$@"`.
 * A limit the shell refuses (one above a hard limit this process already has) ends the launcher
 * with status {@link launcherFailureStatus} and a message on stderr, before anything is started.
 *
 * CPU: soft at the limit, so the program gets `SIGXCPU` and `exited` names the limit; hard one
 * second later, so a program that ignores the signal is killed. The soft limit is lowered first:
 * the kernel refuses a hard limit below the current soft one (usually unlimited). Open files and file size: soft and hard alike, so the
 * program cannot raise them again. File size is in 512-byte blocks, rounded down (a limit under
 * 512 bytes allows no write past the start of a file).
 */
export function rlimitScript(limits: SandboxLimits): string {
  const { cpuSeconds, fileBytes, openFiles } = limits;
  const steps: string[] = [];
  if (cpuSeconds !== undefined) {
    const seconds = wholeNumber(Math.ceil(cpuSeconds), 'cpuSeconds');
    steps.push(limitStep(`-S -t ${seconds}`, 'cpuSeconds'), limitStep(`-H -t ${seconds + 1}`, 'cpuSeconds'));
  }
  if (fileBytes !== undefined) {
    const blocks = wholeNumber(Math.floor(fileBytes / fileSizeBlockBytes), 'fileBytes');
    steps.push(limitStep(`-f ${blocks}`, 'fileBytes'));
  }
  if (openFiles !== undefined) {
    steps.push(limitStep(`-n ${wholeNumber(Math.floor(openFiles), 'openFiles')}`, 'openFiles'));
  }
  steps.push(limitStep('-c 0', 'core files'));
  return [...steps, 'exec "$@"'].join('\n');
}

/** One `ulimit` call that ends the launcher, naming the limit, when the shell refuses it. */
function limitStep(ulimitArguments: string, limit: string): string {
  const message = `${launcherName}: could not set ${limit} (ulimit ${ulimitArguments}): a hard limit of this process is lower`;
  return `ulimit ${ulimitArguments} || { echo '${message}' >&2; exit ${launcherFailureStatus}; }`;
}

/**
 * A limit as the script writes it: only a non-negative safe integer ever reaches the shell text.
 * The plan has already checked that each limit is a positive finite number; this also refuses one
 * too large to write as an integer, which no shell could set.
 */
function wholeNumber(value: number, limit: string): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new ConfigurationError(
      `The sandbox limit ${limit} is too large for the seatbelt launcher (${value}): give at most ${Number.MAX_SAFE_INTEGER}.`,
      { option: `limits.${limit}` },
    );
  }
  return value;
}
