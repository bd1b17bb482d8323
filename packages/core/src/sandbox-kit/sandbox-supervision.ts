import type { ChildProcess } from 'node:child_process';
import { basename } from 'node:path';
import type { Duplex, Readable } from 'node:stream';
import { CleanupError } from '../errors.js';
import { nodeStream } from '../lazy-builtins.js';
import type { SandboxExit, SandboxLimits, SandboxProcess } from '../sandbox.js';
import { BoundedOutputBuffer } from './bounded-output.js';
import { beforeDeadline, streamsSettled } from './process-waiting.js';
import { ignoreLaterErrors } from './sandbox-child.js';
import { type SandboxLimitWatch, watchSandboxLimits } from './sandbox-limit-watch.js';
import type { SandboxProcessTree } from './sandbox-process-tree.js';
import type { SandboxSpawnPlan } from './sandbox-spawn-plan.js';
import { isMadeWorkspace, removeSandboxWorkspace } from './sandbox-workspace.js';
import { SandboxWorkspaceError } from './sandbox-workspace-error.js';

/** How long `close()` waits for the tree to be gone and the child to exit before its `CleanupError`. */
export const sandboxCloseTimeoutMilliseconds = 5_000;

/** The first pause between two `terminate()` calls in `close()`; it doubles up to the longest. */
const firstClosePollMilliseconds = 5;
const longestClosePollMilliseconds = 50;

/**
 * How long `exited` waits, after the child has exited, for stdout and stderr to deliver the bytes
 * still in the pipes. Bounded because a background process may hold the pipes open for ever.
 */
const outputDrainMilliseconds = 250;

/** The options of {@link superviseSandboxProcess}. */
export interface SandboxSupervisionOptions {
  /** The backend's name, for the messages and details of its errors. */
  readonly backend: string;
  /** The checked spec: its `extraFds`, `limits.wallSeconds`, `signal` and `workspace` are used here. */
  readonly plan: SandboxSpawnPlan;
  /**
   * The started child (its `spawn` event has fired, so it has a pid), with stdout and stderr piped
   * and the plan's channels at fd 3 and on, as {@link startSandboxChild} starts it. Pipes past the
   * channels (a launcher's own) are closed with the rest by `close()`.
   */
  readonly child: ChildProcess;
  /** Everything the child started, as the backend reaches it; {@link processGroupTree} for a process group. */
  readonly tree: SandboxProcessTree;
  /**
   * A buffer already collecting the child's stderr, for a backend that read it before the sandbox
   * existed (to explain a failed start). Default: a new 64 KiB buffer.
   */
  readonly stderr?: BoundedOutputBuffer;
  /**
   * Turns the child's exit into the program's: a launcher that reports a signal as exit status
   * 128 + n gives back the signal, and a backend that can tell which limit ended the process (a
   * cgroup's out-of-memory count) sets `limitExceeded`. Called once; a rejection keeps the exit
   * as Node reported it.
   */
  readonly interpretExit?: (exit: SandboxExit) => SandboxExit | Promise<SandboxExit>;
  /**
   * Starts a watch the backend keeps on a limit the kernel does not enforce for it (memory sampled
   * from /proc): it calls `exceeded` with the limit once it is crossed, and the tree is killed.
   * Returns the function that stops the watch; it is called when the child exits or `close()` starts.
   */
  readonly watchLimits?: (exceeded: (limit: keyof SandboxLimits) => void) => () => void;
}

/**
 * Wraps a started child in the `SandboxProcess` contract, so a backend only decides how to start
 * its command and how to reach its process tree. It provides:
 *
 * - the channels (fd 3 and on) and bounded stdout and stderr (64 KiB each, counted beyond that);
 * - the wall timer (`limits.wallSeconds`) and the plan's abort signal, each killing the tree;
 * - `exited`, which never rejects, settles once the child exited and its last output was read,
 *   and reports `limitExceeded` for the wall clock, a backend's own watch, `SIGXCPU` under
 *   `cpuSeconds` and `SIGXFSZ` under `fileBytes`;
 * - `kill(signal)`, which signals the tree until `close()` released it, then does nothing (its ids
 *   may belong to someone else by then);
 * - `close()`, idempotent: kills the tree until it is gone and waits for the child to exit, both
 *   within 5 s, closes every pipe, releases the tree and removes the workspace (with
 *   {@link removeSandboxWorkspace}); it rejects with one `CleanupError` listing every part that
 *   failed.
 *
 * The plan's workspace must be one `createSandboxWorkspace()` made: otherwise the child is killed
 * and a `SandboxWorkspaceError` thrown, so `close()` never removes a directory it was only given.
 *
 * @example
 * ```ts
 * async spawn(spec) {
 *   const plan = planSandboxSpawn(spec, { name: 'nice', capabilities });
 *   await checkSpawnDirectories(plan);
 *   const child = await startSandboxChild(plan, { backend: 'nice', command: '/usr/bin/nice', args: [plan.command, ...plan.args] });
 *   return superviseSandboxProcess({ backend: 'nice', plan, child, tree: processGroupTree(child.pid!) });
 * }
 * ```
 */
export function superviseSandboxProcess(options: SandboxSupervisionOptions): SandboxProcess {
  const { plan, child, tree } = options;
  const { pid, channels, stdoutStream, stderrStream } = checkSupervisable(options);
  const stdout = new BoundedOutputBuffer();
  stdoutStream.on('data', (chunk: Buffer) => stdout.append(chunk));
  let stderr = options.stderr;
  if (stderr === undefined) {
    const buffer = new BoundedOutputBuffer();
    stderrStream.on('data', (chunk: Buffer) => buffer.append(chunk));
    stderr = buffer;
  }
  const limitWatch = watchSandboxLimits(plan, tree, options.watchLimits);
  const exited = new Promise<SandboxExit>((resolve) => {
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      limitWatch.stop();
      const reported: SandboxExit = { code, signal };
      // settleExit catches what can fail; the fallback only keeps `exited` from ever rejecting.
      settleExit(reported, options, limitWatch, [stdoutStream, stderrStream]).then(resolve, () =>
        resolve(reported),
      );
    };
    if (child.exitCode !== null || child.signalCode !== null) onExit(child.exitCode, child.signalCode);
    else child.once('exit', onExit);
  });
  const state = { isReleased: false };
  let closing: Promise<void> | undefined;
  return {
    pid,
    channel: channels[0]!,
    channels,
    stdout,
    stderr,
    exited,
    kill(signal: NodeJS.Signals = 'SIGKILL') {
      // Not only until the child exits: processes it started may outlive it. After close() the
      // tree is gone and its ids may belong to someone else.
      if (state.isReleased) return;
      tree.signal(signal);
    },
    close() {
      closing ??= closeSupervised(options, pid, { exited, limitWatch, state });
      return closing;
    },
  };
}

/**
 * The child's pid, channels and output pipes, checked: a child the kit cannot supervise (no pid,
 * a workspace the kit did not make, missing pipes) is killed, not left behind.
 */
function checkSupervisable(options: SandboxSupervisionOptions): {
  readonly pid: number;
  readonly channels: Duplex[];
  readonly stdoutStream: Readable;
  readonly stderrStream: Readable;
} {
  const { plan, child, tree } = options;
  const pid = child.pid;
  if (pid === undefined) {
    throw new TypeError('superviseSandboxProcess needs a started child: wait for its spawn event first.');
  }
  ignoreLaterErrors(child);
  if (!isMadeWorkspace(plan.workspace)) {
    // close() removes the workspace: it must be one the kit made, never a path it was only given.
    killUnsupervised(child, tree);
    throw new SandboxWorkspaceError(
      `The spawn spec's workspace ${plan.workspace} was not made by createSandboxWorkspace(), so the sandbox cannot take it over; the process was killed. Check the workspace with checkSpawnDirectories() or planSandboxPaths() before starting anything.`,
      { path: plan.workspace, problem: 'not-made-here' },
    );
  }
  const channels = child.stdio
    .slice(3, 3 + plan.extraFds)
    .filter((stream) => stream instanceof nodeStream().Duplex);
  const stdoutStream = child.stdout;
  const stderrStream = child.stderr;
  if (stdoutStream === null || stderrStream === null || channels.length !== plan.extraFds) {
    // Nothing will supervise this child, so it must not outlive the mistake.
    killUnsupervised(child, tree);
    throw new TypeError(
      `The child needs stdout, stderr and ${plan.extraFds} channel pipe(s) at fd 3 and on, as startSandboxChild opens them.`,
    );
  }
  return { pid, channels, stdoutStream, stderrStream };
}

/** The program's exit from the child's: as the backend interprets it, with the limit that ended it. */
async function settleExit(
  reported: SandboxExit,
  options: SandboxSupervisionOptions,
  limitWatch: SandboxLimitWatch,
  outputStreams: readonly Readable[],
): Promise<SandboxExit> {
  let exit = reported;
  try {
    if (options.interpretExit !== undefined) exit = await options.interpretExit(reported);
  } catch {
    // The backend could not say more about this exit; Node's account of it still holds.
  }
  // A limit the parent enforced counts only when the kill ended the process, not when the
  // program exited by itself at the moment the limit came.
  const limitExceeded =
    (exit.signal !== null ? limitWatch.exceeded() : undefined) ??
    exit.limitExceeded ??
    limitOfSignal(exit, options.plan);
  // Let the pipes hand over what the child wrote just before it exited, so diagnostics read
  // after `exited` are complete.
  await streamsSettled(outputStreams, outputDrainMilliseconds);
  const { limitExceeded: _, ...rest } = exit;
  return limitExceeded === undefined ? rest : { ...rest, limitExceeded };
}

/**
 * `close()`: kills the tree until it is gone and waits for the child, closes the pipes, releases
 * the tree and removes the workspace; one `CleanupError` lists every part that failed.
 */
async function closeSupervised(
  options: SandboxSupervisionOptions,
  pid: number,
  supervision: {
    readonly exited: Promise<SandboxExit>;
    readonly limitWatch: SandboxLimitWatch;
    readonly state: { isReleased: boolean };
  },
): Promise<void> {
  const { backend, plan, child, tree } = options;
  supervision.limitWatch.stop();
  const deadline = Date.now() + sandboxCloseTimeoutMilliseconds;
  const seconds = sandboxCloseTimeoutMilliseconds / 1_000;
  const problems: string[] = [];
  if (!(await terminateBefore(tree, deadline))) {
    const survivors = await tree.summarizeSurvivors().catch(() => 'processes of the sandbox');
    problems.push(`${survivors} were still running ${seconds} s after SIGKILL`);
  }
  if ((await beforeDeadline(supervision.exited, deadline)) === undefined) {
    problems.push(
      `process ${pid} (${basename(child.spawnfile)}) did not exit within ${seconds} s of SIGKILL`,
    );
  }
  supervision.state.isReleased = true;
  for (const stream of child.stdio) stream?.destroy();
  if (tree.release !== undefined) {
    await tree.release().catch((error: unknown) => {
      problems.push(`what held its processes could not be released: ${errorMessage(error)}`);
    });
  }
  let removalError: unknown;
  try {
    await removeSandboxWorkspace(plan.workspace);
  } catch (error) {
    removalError = error;
    problems.push(`the workspace ${plan.workspace} could not be removed: ${errorMessage(error)}`);
  }
  if (problems.length > 0) {
    throw new CleanupError(`Closing the ${backend} sandbox process failed: ${problems.join('; ')}.`, {
      cause: removalError,
      backend,
      pid,
      directory: plan.workspace,
      problems,
    });
  }
}

/** Kills a child the kit refused to supervise, and its tree, and closes its pipes. */
function killUnsupervised(child: ChildProcess, tree: SandboxProcessTree): void {
  try {
    tree.signal('SIGKILL');
  } catch {
    // The child itself is killed below either way.
  }
  child.kill('SIGKILL');
  for (const stream of child.stdio) stream?.destroy();
}

/** Calls `terminate()` until the tree is gone; false when the deadline passes first. */
async function terminateBefore(tree: SandboxProcessTree, deadline: number): Promise<boolean> {
  let pause = firstClosePollMilliseconds;
  for (;;) {
    if (await tree.terminate().catch(() => false)) return true;
    if (Date.now() >= deadline) return false;
    await delay(Math.min(pause, Math.max(1, deadline - Date.now())));
    pause = Math.min(pause * 2, longestClosePollMilliseconds);
  }
}

/** The limit an operating-system signal reports, when the plan asked for that limit. */
function limitOfSignal(exit: SandboxExit, plan: SandboxSpawnPlan): keyof SandboxLimits | undefined {
  if (exit.signal === 'SIGXCPU' && plan.limits.cpuSeconds !== undefined) return 'cpuSeconds';
  if (exit.signal === 'SIGXFSZ' && plan.limits.fileBytes !== undefined) return 'fileBytes';
  return undefined;
}

/** Waits, keeping the parent alive for as long, for the same reason as {@link beforeDeadline}. */
function delay(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
