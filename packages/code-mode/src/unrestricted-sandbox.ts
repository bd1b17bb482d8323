import { type ChildProcess, spawn } from 'node:child_process';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { Duplex } from 'node:stream';
import {
  BoundedOutputBuffer,
  CleanupError,
  ConfigurationError,
  defineSandboxBackend,
  noSandboxCapabilities,
  planSandboxSpawn,
  type SandboxBackendV1,
  type SandboxCapabilities,
  type SandboxDetection,
  type SandboxExit,
  type SandboxProcess,
  type SandboxSpawnPlan,
  type SandboxSpawnSpec,
  SandboxUnavailableError,
} from '@ghost/core';
import { beforeDeadline, streamsSettled } from '@ghost/core/internal';

/** The platforms with process groups, which `kill()` and `close()` rely on to reach the children. */
const supportedPlatforms: readonly NodeJS.Platform[] = ['linux', 'darwin', 'freebsd', 'openbsd'];

/** How long `close()` waits for the process group to end before it gives up with a `CleanupError`. */
const closeTimeoutMilliseconds = 5_000;

/** How often `close()` checks whether the process group has ended, re-sending SIGKILL each time. */
const groupPollMilliseconds = 25;

/**
 * How long `exited` waits, after the process has exited, for its stdout and stderr to deliver the
 * bytes still in the pipes. Bounded because a background child may hold the pipes open for ever.
 */
const outputDrainMilliseconds = 250;

/**
 * What the unrestricted backend enforces: only that the child sees exactly `spec.env`. It owns no
 * process tree (a child that leaves the process group escapes `kill()`), denies nothing, isolates
 * neither the network nor the filesystem and enforces no resource limit but the wall clock.
 */
export const unrestrictedCapabilities: SandboxCapabilities = Object.freeze({
  ...noSandboxCapabilities,
  environmentIsolation: true,
});

/**
 * The sandbox backend that contains nothing: it runs the program as a plain child process of
 * Ghost, in its own process group, with exactly the environment it was given. The program can
 * read and write anything the user can, use the network and start programs that outlive it by
 * leaving the group. A user must name it explicitly; it is never a fallback.
 *
 * It is honest about what it cannot do: `spawn` rejects with a `SandboxUnavailableError` unless
 * `network: 'host'` is passed, and for any limit but `wallSeconds`, which it enforces with a timer
 * that kills the process group (`exited` then reports `limitExceeded: 'wallSeconds'`). A malformed
 * spec or a missing workspace rejects with a `ConfigurationError`, a program that cannot be started
 * with a `SandboxUnavailableError` naming it, and an already aborted `signal` with its reason; in
 * each case nothing was started and the workspace is left to the caller.
 *
 * `kill()` signals the whole process group, even after the first process exited, until `close()`.
 * `close()` kills the group, waits up to 5 s until no process of it runs, closes the pipes and
 * removes the workspace, or rejects with a `CleanupError`.
 *
 * @example
 * ```ts
 * const child = await unrestrictedSandbox.spawn({
 *   command: process.execPath,
 *   args: ['host.js'],
 *   env: {},
 *   runtimePaths: [],
 *   workspace: await mkdtemp(join(tmpdir(), 'ghost-')),
 *   network: 'host',
 *   limits: { wallSeconds: 60 },
 * });
 * child.channel.write(frame);
 * await child.close(); // kills the group and removes the workspace
 * ```
 */
export const unrestrictedSandbox: SandboxBackendV1 = defineSandboxBackend({
  kind: 'sandbox',
  specificationVersion: 'sandbox-v1',
  name: 'unrestricted',
  platforms: supportedPlatforms,
  async detect(): Promise<SandboxDetection> {
    if (!supportedPlatforms.includes(process.platform)) {
      return {
        available: false,
        reason: `The unrestricted backend needs process groups, which ${process.platform} does not have; it works on ${supportedPlatforms.join(', ')}.`,
        capabilities: noSandboxCapabilities,
      };
    }
    return { available: true, capabilities: unrestrictedCapabilities };
  },
  async spawn(spec: SandboxSpawnSpec): Promise<SandboxProcess> {
    const plan = planSandboxSpawn(spec, { name: 'unrestricted', capabilities: unrestrictedCapabilities });
    await requireDirectory(plan.workspace, 'workspace');
    if (plan.cwd !== plan.workspace) await requireDirectory(plan.cwd, 'cwd');
    // Starting a program only to kill it at once would be wasted work; reject with the abort reason.
    plan.signal?.throwIfAborted();
    const child = await startChild(plan);
    return superviseChild(child, plan);
  },
});

async function requireDirectory(path: string, field: string): Promise<void> {
  const found = await stat(path).catch((error: unknown) => {
    throw new ConfigurationError(
      `The spawn spec's ${field} ${path} cannot be used: ${errorMessage(error)}. Pass an existing directory.`,
      { cause: error, details: { [field]: path } },
    );
  });
  if (!found.isDirectory()) {
    throw new ConfigurationError(
      `The spawn spec's ${field} ${path} is not a directory. Pass an existing directory.`,
      {
        details: { [field]: path },
      },
    );
  }
}

/** Starts the program and settles once the operating system has started it, or failed to. */
function startChild(plan: SandboxSpawnPlan): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = spawn(plan.command, [...plan.args], {
        env: plan.env,
        cwd: plan.cwd,
        // Its own process group, so one kill(-pid) reaches every descendant that stays in it.
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe', ...Array.from({ length: plan.extraFds }, () => 'pipe' as const)],
      });
    } catch (error) {
      reject(startFailure(plan.command, error));
      return;
    }
    const onSpawn = () => {
      child.off('error', onError);
      resolve(child);
    };
    const onError = (error: Error) => {
      child.off('spawn', onSpawn);
      // Node opened the pipes before exec failed; close them so nothing is left behind.
      for (const stream of child.stdio) stream?.destroy();
      reject(startFailure(plan.command, error));
    };
    child.once('spawn', onSpawn);
    child.once('error', onError);
  });
}

function startFailure(command: string, error: unknown): SandboxUnavailableError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return new SandboxUnavailableError(
    `The unrestricted backend could not start ${command}: ${errorMessage(error)}. Check that the program exists and is executable.`,
    { cause: error, details: { backend: 'unrestricted', command, errorCode: code } },
  );
}

/** Wraps a started child in the {@link SandboxProcess} contract: output, channels, limits, cleanup. */
function superviseChild(child: ChildProcess, plan: SandboxSpawnPlan): SandboxProcess {
  // 'spawn' has fired, so the operating system gave the child a pid.
  const pid = child.pid!;
  const stdoutStream = child.stdout!;
  const stderrStream = child.stderr!;
  const channels = child.stdio.slice(3).map((stream, index) => {
    if (!(stream instanceof Duplex)) {
      throw new Error(`Node did not open fd ${index + 3} as a duplex pipe.`);
    }
    // A child that dies mid-write makes the pipe emit EPIPE or ECONNRESET; without a listener that
    // would crash the host. The caller's own listeners still receive the error.
    stream.on('error', ignore);
    return stream;
  });
  const stdout = new BoundedOutputBuffer();
  const stderr = new BoundedOutputBuffer();
  stdoutStream.on('data', (chunk: Buffer) => stdout.append(chunk));
  stderrStream.on('data', (chunk: Buffer) => stderr.append(chunk));
  stdoutStream.on('error', ignore);
  stderrStream.on('error', ignore);
  child.on('error', ignore);

  let released = false;
  let wallSecondsExceeded = false;
  const signalGroupQuietly = (signal: NodeJS.Signals) => {
    try {
      signalGroup(pid, signal);
    } catch {
      // Called from a timer, an abort listener or close(): nowhere to report to. close() checks
      // afterwards whether the group really ended.
    }
  };
  const wallTimer =
    plan.limits.wallSeconds === undefined
      ? undefined
      : setTimeout(() => {
          wallSecondsExceeded = true;
          signalGroupQuietly('SIGKILL');
        }, plan.limits.wallSeconds * 1_000);
  // The timer must not keep the host alive on its own; the child's pipes already do while it runs.
  wallTimer?.unref();
  const onAbort = () => signalGroupQuietly('SIGKILL');
  plan.signal?.addEventListener('abort', onAbort, { once: true });
  const stopWatching = () => {
    if (wallTimer !== undefined) clearTimeout(wallTimer);
    plan.signal?.removeEventListener('abort', onAbort);
  };
  // The signal may have been aborted while the program was starting.
  if (plan.signal?.aborted) onAbort();

  const exited = new Promise<SandboxExit>((resolve) => {
    child.once('exit', (code, signal) => {
      stopWatching();
      const exit: SandboxExit =
        wallSecondsExceeded && signal !== null
          ? { code, signal, limitExceeded: 'wallSeconds' }
          : { code, signal };
      // Let the pipes hand over what the child wrote just before it exited, so diagnostics read
      // after `exited` are complete.
      void streamsSettled([stdoutStream, stderrStream], outputDrainMilliseconds).then(() => resolve(exit));
    });
  });

  let closing: Promise<void> | undefined;
  const close = async (): Promise<void> => {
    stopWatching();
    const deadline = Date.now() + closeTimeoutMilliseconds;
    signalGroupQuietly('SIGKILL');
    const problems: string[] = [];
    const exit = await beforeDeadline(exited, deadline);
    if (exit === undefined) {
      problems.push(`process ${pid} did not exit within ${closeTimeoutMilliseconds / 1_000} s of SIGKILL`);
    } else if (!(await waitForGroupToEnd(pid, deadline))) {
      problems.push(
        `processes of group ${pid} were still running ${closeTimeoutMilliseconds / 1_000} s after SIGKILL`,
      );
    }
    released = true;
    for (const stream of [...channels, stdoutStream, stderrStream]) stream.destroy();
    let removalError: unknown;
    try {
      await rm(plan.workspace, { recursive: true, force: true });
    } catch (error) {
      removalError = error;
      problems.push(`the workspace ${plan.workspace} could not be removed: ${errorMessage(error)}`);
    }
    if (problems.length > 0) {
      throw new CleanupError(`Closing the unrestricted sandbox process failed: ${problems.join('; ')}.`, {
        cause: removalError,
        details: { backend: 'unrestricted', pid, workspace: plan.workspace, problems },
      });
    }
  };

  return {
    pid,
    channel: channels[0]!,
    channels,
    stdout,
    stderr,
    exited,
    kill(signal: NodeJS.Signals = 'SIGKILL') {
      // Not only until the leader exits: children left in its group may outlive it. After close()
      // the group is gone and its id may belong to someone else.
      if (released) return;
      signalGroup(pid, signal);
    },
    close() {
      closing ??= close();
      return closing;
    },
  };
}

/** Sends a signal to a whole process group; a group that no longer exists is not an error. */
function signalGroup(groupId: number, signal: NodeJS.Signals | 0): void {
  try {
    process.kill(-groupId, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** Re-sends SIGKILL until no live process is left in the group; false when the deadline passes first. */
async function waitForGroupToEnd(groupId: number, deadline: number): Promise<boolean> {
  for (;;) {
    if (!(await groupHasLiveMembers(groupId))) return true;
    if (Date.now() >= deadline) return false;
    try {
      signalGroup(groupId, 'SIGKILL');
    } catch {
      // A member we may not signal: keep checking until the deadline, then report it.
    }
    await delay(groupPollMilliseconds);
  }
}

/**
 * Whether any process of the group still runs. A killed child of a child is a zombie until its new
 * parent (often PID 1) reaps it, and kill(2) still finds zombies; they run nothing, so on Linux
 * /proc tells them apart. Elsewhere a zombie counts as live, to err on the safe side.
 */
async function groupHasLiveMembers(groupId: number): Promise<boolean> {
  try {
    process.kill(-groupId, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  if (process.platform !== 'linux') return true;
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return true;
  }
  const states = await Promise.all(
    entries
      .filter((entry) => /^\d+$/.test(entry))
      .map((entry) =>
        readFile(`/proc/${entry}/stat`, 'utf8').then(
          (stat) => parseProcessStat(stat),
          () => undefined,
        ),
      ),
  );
  return states.some(
    (state) => state !== undefined && state.groupId === groupId && !['Z', 'X', 'x'].includes(state.state),
  );
}

/** Reads the state and process group from a Linux /proc/<pid>/stat line. */
function parseProcessStat(stat: string): { state: string; groupId: number } | undefined {
  // The command name in parentheses may itself contain spaces and parentheses: split after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [state, , groupId] = fields;
  if (state === undefined || groupId === undefined) return undefined;
  return { state, groupId: Number(groupId) };
}

/** Waits, keeping the host alive for as long, for the same reason as {@link beforeDeadline}. */
function delay(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function ignore(): void {}
