import { type ChildProcess, spawn } from 'node:child_process';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { isAbsolute, relative } from 'node:path';
import { Duplex, type Readable } from 'node:stream';
import {
  CleanupError,
  ConfigurationError,
  defineSandboxBackend,
  type SandboxBackendV1,
  type SandboxCapabilities,
  type SandboxDetection,
  type SandboxExit,
  type SandboxLimits,
  type SandboxProcess,
  type SandboxSpawnSpec,
  SandboxUnavailableError,
} from '@ghost/core';
import { BoundedOutputBuffer } from './bounded-output.js';

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

/** The largest `wallSeconds` a Node timer can wait; a larger delay would fire after 1 ms instead. */
const largestWallSeconds = Math.floor((2 ** 31 - 1) / 1_000);

/** The most extra pipes a process may ask for; far more than the protocol channel needs. */
const largestExtraFds = 64;

/** The limits a plain child process cannot enforce: only the operating system or a sandbox can. */
const unenforceableLimits = ['memoryBytes', 'cpuSeconds', 'fileBytes', 'openFiles', 'processes'] as const;

/** Every key of {@link SandboxLimits}, to reject a misspelt one rather than silently not apply it. */
const knownLimits: ReadonlySet<string> = new Set<keyof SandboxLimits>([
  ...unenforceableLimits,
  'wallSeconds',
]);

/**
 * What the unrestricted backend enforces: only that the child sees exactly `spec.env`. It owns no
 * process tree (a child that leaves the process group escapes `kill()`), denies nothing, isolates
 * neither the network nor the filesystem and enforces no resource limit but the wall clock.
 */
export const unrestrictedCapabilities: SandboxCapabilities = Object.freeze({
  processTreeOwnership: false,
  subprocessDenial: false,
  networkIsolation: false,
  filesystemIsolation: false,
  memoryLimit: false,
  cpuLimit: false,
  fileSizeLimit: false,
  openFilesLimit: false,
  processLimit: false,
  syscallFilter: false,
  environmentIsolation: true,
});

/** Every flag false: what a backend reports where it does not work at all. */
const noCapabilities: SandboxCapabilities = Object.freeze({
  processTreeOwnership: false,
  subprocessDenial: false,
  networkIsolation: false,
  filesystemIsolation: false,
  memoryLimit: false,
  cpuLimit: false,
  fileSizeLimit: false,
  openFilesLimit: false,
  processLimit: false,
  syscallFilter: false,
  environmentIsolation: false,
});

/**
 * A {@link SandboxSpawnSpec} checked and normalised for the unrestricted backend: every default
 * applied, every part the backend cannot enforce already rejected. Built by {@link planUnrestrictedSpawn}.
 */
export interface UnrestrictedSpawnPlan {
  /** The absolute path of the program. */
  readonly command: string;
  readonly args: readonly string[];
  /** The child's whole environment, a copy without a prototype so no inherited key can leak in. */
  readonly env: Readonly<Record<string, string>>;
  /** The absolute path of the workspace, removed by `close()`. */
  readonly workspace: string;
  /** The working directory: `spec.cwd`, or the workspace when it was left out. */
  readonly cwd: string;
  /** How many pipes the child gets at fd 3 and on; at least 1, for the protocol channel. */
  readonly extraFds: number;
  /** Seconds before the whole process group is killed, when `limits.wallSeconds` was given. */
  readonly wallSeconds: number | undefined;
  /** Aborting it kills the process group. */
  readonly signal: AbortSignal | undefined;
}

/**
 * Checks a spawn spec for the unrestricted backend without touching the system, and applies its
 * defaults. Whether the workspace exists is checked by `spawn`, which may do I/O.
 *
 * @throws ConfigurationError when the spec is malformed: a relative command, an argument or an
 *   environment value that is not a string, a relative workspace, a `cwd` outside the workspace
 *   and the runtime paths, an unknown limit key or a limit that is not a positive number.
 * @throws SandboxUnavailableError when the spec asks for what a plain child process cannot
 *   enforce: `network: 'none'` (also the default when `network` is left out) or any limit other
 *   than `wallSeconds`.
 *
 * @example
 * ```ts
 * const plan = planUnrestrictedSpawn({ command: process.execPath, args: ['-e', ''], env: {}, runtimePaths: [], workspace, network: 'host' });
 * plan.extraFds; // 1
 * ```
 */
export function planUnrestrictedSpawn(spec: SandboxSpawnSpec): UnrestrictedSpawnPlan {
  if (typeof spec !== 'object' || spec === null) {
    throw new ConfigurationError(`The spawn spec must be an object, got ${describe(spec)}.`);
  }
  const command = requireAbsolutePath(spec.command, 'command');
  if (!Array.isArray(spec.args)) {
    throw new ConfigurationError(
      `The spawn spec's args must be an array of strings, got ${describe(spec.args)}.`,
    );
  }
  const args = spec.args.map((argument: unknown, index) => requireString(argument, `args[${index}]`));
  const env = planEnvironment(spec.env);
  if (!Array.isArray(spec.runtimePaths)) {
    throw new ConfigurationError(
      `The spawn spec's runtimePaths must be an array of absolute paths, got ${describe(spec.runtimePaths)}.`,
    );
  }
  const runtimePaths = spec.runtimePaths.map((path: unknown, index) =>
    requireAbsolutePath(path, `runtimePaths[${index}]`),
  );
  const workspace = requireAbsolutePath(spec.workspace, 'workspace');
  const cwd = spec.cwd === undefined ? workspace : requireAbsolutePath(spec.cwd, 'cwd');
  if (![workspace, ...runtimePaths].some((root) => isInside(cwd, root))) {
    throw new ConfigurationError(
      `The spawn spec's cwd ${cwd} is neither inside the workspace ${workspace} nor inside a runtime path. Use a directory in one of them.`,
      { details: { cwd, workspace, runtimePaths } },
    );
  }
  const extraFds = spec.extraFds ?? 1;
  if (!Number.isInteger(extraFds) || extraFds < 1 || extraFds > largestExtraFds) {
    throw new ConfigurationError(
      `The spawn spec's extraFds must be an integer from 1 to ${largestExtraFds} (fd 3 carries the protocol channel), got ${describe(extraFds)}.`,
    );
  }
  if (spec.signal !== undefined && !(spec.signal instanceof AbortSignal)) {
    throw new ConfigurationError(
      `The spawn spec's signal must be an AbortSignal, got ${describe(spec.signal)}.`,
    );
  }
  if (spec.network === undefined || spec.network === 'none') {
    throw new SandboxUnavailableError(
      "The unrestricted backend cannot isolate the network; pass network: 'host' to acknowledge it, or use a sandbox backend that can isolate the network.",
      { details: { backend: 'unrestricted', network: spec.network ?? 'none' } },
    );
  }
  if (spec.subprocesses === 'deny') {
    throw new SandboxUnavailableError(
      "The unrestricted backend cannot deny subprocesses; leave subprocesses out (or 'allow'), or use a sandbox backend that can deny them.",
      { details: { backend: 'unrestricted', subprocesses: 'deny' } },
    );
  }
  if (spec.subprocesses !== undefined && spec.subprocesses !== 'allow') {
    throw new ConfigurationError(
      `The spawn spec's subprocesses must be 'allow' or 'deny', got ${describe(spec.subprocesses)}.`,
    );
  }
  if (spec.network !== 'host') {
    throw new ConfigurationError(
      `The spawn spec's network must be 'none' or 'host', got ${describe(spec.network)}.`,
    );
  }
  return {
    command,
    args,
    env,
    workspace,
    cwd,
    extraFds,
    wallSeconds: planWallSeconds(spec.limits),
    signal: spec.signal,
  };
}

/** Checks the limits and returns the only one the backend enforces, `wallSeconds`. */
function planWallSeconds(limits: SandboxLimits | undefined): number | undefined {
  if (limits === undefined) return undefined;
  if (typeof limits !== 'object' || limits === null || Array.isArray(limits)) {
    throw new ConfigurationError(`The spawn spec's limits must be an object, got ${describe(limits)}.`);
  }
  const given = Object.entries(limits).filter(([, value]) => value !== undefined);
  const unknown = given.map(([key]) => key).filter((key) => !knownLimits.has(key));
  if (unknown.length > 0) {
    throw new ConfigurationError(
      `Unknown sandbox limit ${unknown.map((key) => JSON.stringify(key)).join(', ')}: use ${[...knownLimits].join(', ')}.`,
      { details: { unknown } },
    );
  }
  for (const [key, value] of given) {
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
      throw new ConfigurationError(
        `The sandbox limit ${key} must be a positive number, got ${describe(value)}.`,
      );
    }
  }
  const unenforceable = unenforceableLimits.filter((key) => limits[key] !== undefined);
  if (unenforceable.length > 0) {
    throw new SandboxUnavailableError(
      `The unrestricted backend cannot enforce ${unenforceable.join(', ')}: a plain child process has no operating-system limits. Use a sandbox backend that can enforce them, or do not ask for them.`,
      { details: { backend: 'unrestricted', limits: unenforceable } },
    );
  }
  const wallSeconds = limits.wallSeconds;
  if (wallSeconds !== undefined && wallSeconds > largestWallSeconds) {
    throw new ConfigurationError(
      `The sandbox limit wallSeconds must be at most ${largestWallSeconds} (about 24 days), got ${wallSeconds}.`,
    );
  }
  return wallSeconds;
}

/** Copies the environment into an object without a prototype, checking every name and value. */
function planEnvironment(env: unknown): Readonly<Record<string, string>> {
  if (typeof env !== 'object' || env === null || Array.isArray(env)) {
    throw new ConfigurationError(
      `The spawn spec's env must be an object of strings (the whole environment), got ${describe(env)}.`,
    );
  }
  // Node's spawn also copies inherited enumerable keys into the environment, so the copy has none.
  const copy: Record<string, string> = Object.create(null);
  for (const [name, value] of Object.entries(env)) {
    if (name === '' || name.includes('=') || name.includes('\0')) {
      throw new ConfigurationError(
        `The environment variable name ${JSON.stringify(name)} is invalid: it must be non-empty, without '=' or NUL.`,
      );
    }
    copy[name] = requireString(value, `env.${name}`);
  }
  return copy;
}

function requireString(value: unknown, field: string): string {
  if (typeof value !== 'string') {
    throw new ConfigurationError(`The spawn spec's ${field} must be a string, got ${describe(value)}.`);
  }
  // A NUL byte cannot cross exec(); Node would throw a less specific error from spawn.
  if (value.includes('\0')) {
    throw new ConfigurationError(
      `The spawn spec's ${field} contains a NUL byte, which a process cannot receive.`,
    );
  }
  return value;
}

function requireAbsolutePath(value: unknown, field: string): string {
  const path = requireString(value, field);
  if (!isAbsolute(path)) {
    throw new ConfigurationError(
      `The spawn spec's ${field} must be an absolute path, got ${JSON.stringify(path)}.`,
    );
  }
  return path;
}

function isInside(path: string, root: string): boolean {
  const fromRoot = relative(root, path);
  return fromRoot === '' || (!fromRoot.startsWith('..') && !isAbsolute(fromRoot));
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return typeof value;
}

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
        capabilities: noCapabilities,
      };
    }
    return { available: true, capabilities: unrestrictedCapabilities };
  },
  async spawn(spec: SandboxSpawnSpec): Promise<SandboxProcess> {
    const plan = planUnrestrictedSpawn(spec);
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
function startChild(plan: UnrestrictedSpawnPlan): Promise<ChildProcess> {
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
function superviseChild(child: ChildProcess, plan: UnrestrictedSpawnPlan): SandboxProcess {
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
    plan.wallSeconds === undefined
      ? undefined
      : setTimeout(() => {
          wallSecondsExceeded = true;
          signalGroupQuietly('SIGKILL');
        }, plan.wallSeconds * 1_000);
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
      void settled([stdoutStream, stderrStream], outputDrainMilliseconds).then(() => resolve(exit));
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

/** Resolves once every stream has ended or closed, or after `milliseconds`, whichever is first. */
function settled(streams: readonly Readable[], milliseconds: number): Promise<void> {
  return new Promise((resolve) => {
    let pending = 0;
    const timer = setTimeout(resolve, milliseconds);
    timer.unref();
    const done = () => {
      pending -= 1;
      if (pending === 0) {
        clearTimeout(timer);
        resolve();
      }
    };
    for (const stream of streams) {
      if (stream.readableEnded || stream.destroyed) continue;
      pending += 1;
      let counted = false;
      const once = () => {
        if (counted) return;
        counted = true;
        done();
      };
      stream.once('end', once);
      stream.once('close', once);
    }
    if (pending === 0) {
      clearTimeout(timer);
      resolve();
    }
  });
}

/**
 * Waits for `promise` until `deadline` (a `Date.now()` value); undefined when the deadline came first.
 * The timer is not unref'd, on purpose: the host must not exit while close() still confirms the kill.
 */
async function beforeDeadline<Value>(promise: Promise<Value>, deadline: number): Promise<Value | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits, keeping the host alive for as long, for the same reason as {@link beforeDeadline}. */
function delay(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function ignore(): void {}
