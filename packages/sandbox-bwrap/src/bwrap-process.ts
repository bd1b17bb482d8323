import { type ChildProcess, spawn } from 'node:child_process';
import { chown, rm } from 'node:fs/promises';
import { constants } from 'node:os';
import { Duplex, type Readable } from 'node:stream';
import {
  BoundedOutputBuffer,
  CleanupError,
  type SandboxExit,
  type SandboxLimits,
  type SandboxProcess,
  type SandboxSpawnPlan,
  SandboxUnavailableError,
} from '@ghost/core';
import { beforeDeadline, streamsSettled } from '@ghost/core/internal';
import { bwrapArguments } from './bwrap-arguments.js';
import type { BwrapIdentity } from './bwrap-identity.js';
import { type HostTools, launchCommand, launcherFailureCode } from './bwrap-launch.js';
import type { SandboxCgroup } from './cgroups.js';
import {
  pidNamespaceEnded,
  processesInPidNamespace,
  processTree,
  residentBytes,
  signalQuietly,
} from './process-tree.js';

/** How long `close()` waits for the whole sandbox to be gone before it gives up with a `CleanupError`. */
const closeTimeoutMilliseconds = 5_000;

/** How often `close()` looks again whether the sandbox is gone, re-sending SIGKILL each time. */
const closePollMilliseconds = 5;

/** How often the parent samples the tree's memory when no cgroup bounds it. */
const memorySampleMilliseconds = 50;

/** How long `exited` waits for stdout and stderr to deliver what is still in the pipes. */
const outputDrainMilliseconds = 250;

/** What bubblewrap writes to `--info-fd` once the sandbox exists. */
interface SandboxInfo {
  /** The host pid of the pid namespace's init (bubblewrap's reaper); killing it ends the namespace. */
  readonly 'child-pid': number;
  readonly 'pid-namespace': number;
}

/** Everything {@link startBwrapProcess} needs: the checked spec and what the backend prepared. */
export interface BwrapProcessOptions {
  readonly plan: SandboxSpawnPlan;
  readonly tools: HostTools;
  readonly sharedLibraries: readonly string[];
  /** Who the program runs as. */
  readonly identity: BwrapIdentity;
  /** The classic BPF program bubblewrap loads, when the backend filters system calls. */
  readonly seccompFilter?: Buffer;
  /** The cgroup that bounds memory and processes, when the host offers one. */
  readonly cgroup?: SandboxCgroup;
  /** When set, the parent enforces `memoryBytes` by sampling, because no cgroup does. */
  readonly sampledMemoryBytes?: number;
}

/**
 * Starts bubblewrap for a planned spec and resolves once the sandbox exists (bubblewrap reported
 * its namespaces), or rejects with a `SandboxUnavailableError` carrying bubblewrap's own message.
 */
export async function startBwrapProcess(options: BwrapProcessOptions): Promise<SandboxProcess> {
  const { plan, identity } = options;
  if (identity.kind === 'dropped') await handOverWorkspace(plan, identity);
  const channelCount = plan.extraFds;
  const seccompFd = options.seccompFilter === undefined ? undefined : 3 + channelCount;
  const emptyFileFd = 3 + channelCount + (seccompFd === undefined ? 0 : 1);
  const infoFd = emptyFileFd + 1;
  const args = bwrapArguments(plan, {
    sharedLibraries: options.sharedLibraries,
    identity,
    emptyFileFd,
    infoFd,
    ...(seccompFd === undefined ? {} : { seccompFd }),
  });
  const [command, launchArgs] = launchCommand(
    {
      tools: options.tools,
      keepBelow: infoFd + 1,
      cgroupJoinFiles: options.cgroup?.joinFiles ?? [],
      limits: plan.limits,
    },
    args,
  );
  const child = spawn(command, launchArgs, {
    env: {},
    stdio: ['ignore', 'pipe', 'pipe', ...Array.from({ length: infoFd - 2 }, () => 'pipe' as const)],
  });
  // A pipe whose far end dies mid-transfer emits EPIPE or ECONNRESET; that is the sandbox
  // ending, which `exited` reports, not an error to crash the parent with.
  for (const stream of child.stdio) stream?.on('error', ignore);
  child.on('error', ignore);
  const stderr = new BoundedOutputBuffer();
  child.stderr?.on('data', (chunk: Buffer) => stderr.append(chunk));
  if (seccompFd !== undefined) (child.stdio[seccompFd] as Duplex).end(options.seccompFilter);
  (child.stdio[emptyFileFd] as Duplex).end();
  let info: SandboxInfo;
  try {
    info = await readInfo(child, infoFd);
  } catch (error) {
    child.kill('SIGKILL');
    // Its cgroup can be removed only once it has exited, and its message may still be in the pipe.
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
    await beforeDeadline(exited, Date.now() + closeTimeoutMilliseconds);
    await streamsSettled([child.stderr!], outputDrainMilliseconds);
    for (const stream of child.stdio) stream?.destroy();
    const detail = (stderr.text.trim() || (error as Error).message).replace(/\.$/, '');
    throw new SandboxUnavailableError(
      `bubblewrap could not start the sandbox: ${detail}. Run ghost-doctor to see what this machine enforces and what is missing.`,
      {
        cause: error,
        details: { backend: 'bwrap', command: plan.command },
      },
    );
  }
  return superviseBwrapProcess(child, info, stderr, options);
}

/**
 * Gives the workspace directory to the unprivileged identity (a root parent's workspace is
 * root's), so the program can write in it; what the caller put inside keeps its owner. `close()`
 * removes it as root, as before.
 */
async function handOverWorkspace(
  plan: SandboxSpawnPlan,
  identity: Extract<BwrapIdentity, { kind: 'dropped' }>,
): Promise<void> {
  try {
    await chown(plan.workspace, identity.uid, identity.gid);
  } catch (error) {
    throw new SandboxUnavailableError(
      `The bwrap sandbox could not give the workspace ${plan.workspace} to uid ${identity.uid}, gid ${identity.gid}, the identity programs run as when the parent is root: ${(error as Error).message}. Use a workspace on a filesystem that allows chown (not one mounted with root squashing).`,
      { cause: error, details: { backend: 'bwrap', workspace: plan.workspace } },
    );
  }
}

/** Resolves with bubblewrap's info JSON, or rejects if it exits (or fails to start) first. */
function readInfo(child: ChildProcess, infoFd: number): Promise<SandboxInfo> {
  const stream = child.stdio[infoFd] as Readable;
  return new Promise((resolve, reject) => {
    let text = '';
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      const why =
        code === launcherFailureCode ? 'the launcher could not join the cgroup' : `exit ${code ?? signal}`;
      reject(new Error(`bubblewrap ended before the sandbox existed (${why})`));
    };
    child.once('exit', onExit);
    child.once('error', reject);
    stream.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      try {
        const info = JSON.parse(text) as SandboxInfo;
        child.off('exit', onExit);
        child.off('error', reject);
        stream.destroy();
        resolve(info);
      } catch {
        // Not the whole document yet.
      }
    });
  });
}

function superviseBwrapProcess(
  child: ChildProcess,
  info: SandboxInfo,
  stderr: BoundedOutputBuffer,
  options: BwrapProcessOptions,
): SandboxProcess {
  const { plan, cgroup } = options;
  const pid = child.pid!;
  const namespaceInit = info['child-pid'];
  const channels = child.stdio.slice(3, 3 + plan.extraFds).map((stream, index) => {
    if (!(stream instanceof Duplex)) throw new Error(`Node did not open fd ${index + 3} as a duplex pipe.`);
    return stream;
  });
  const stdout = new BoundedOutputBuffer();
  child.stdout!.on('data', (chunk: Buffer) => stdout.append(chunk));

  let exceeded: keyof SandboxLimits | undefined;
  let released = false;
  const killSandbox = () => {
    // The namespace's init first: when it dies the kernel kills everything else in the namespace.
    signalQuietly(namespaceInit, 'SIGKILL');
    signalQuietly(pid, 'SIGKILL');
  };
  const wallSeconds = plan.limits.wallSeconds;
  const wallTimer =
    wallSeconds === undefined
      ? undefined
      : setTimeout(() => {
          exceeded ??= 'wallSeconds';
          killSandbox();
        }, wallSeconds * 1_000);
  wallTimer?.unref();
  const sampler =
    options.sampledMemoryBytes === undefined
      ? undefined
      : sampleMemory(pid, options.sampledMemoryBytes, () => {
          exceeded ??= 'memoryBytes';
          killSandbox();
        });
  const onAbort = () => killSandbox();
  plan.signal?.addEventListener('abort', onAbort, { once: true });
  const stopWatching = () => {
    if (wallTimer !== undefined) clearTimeout(wallTimer);
    sampler?.stop();
    plan.signal?.removeEventListener('abort', onAbort);
  };
  if (plan.signal?.aborted) onAbort();

  const exited = new Promise<SandboxExit>((resolve) => {
    child.once('exit', (code, signal) => {
      stopWatching();
      void (async () => {
        const exit = translateExit(code, signal);
        if (exceeded === undefined && cgroup !== undefined && (await cgroup.oomKilled()))
          exceeded = 'memoryBytes';
        if (exceeded === undefined) exceeded = limitOfSignal(exit.signal);
        await streamsSettled([child.stdout!, child.stderr!], outputDrainMilliseconds);
        resolve(exceeded === undefined ? exit : { ...exit, limitExceeded: exceeded });
      })();
    });
  });

  let closing: Promise<void> | undefined;
  const close = async (): Promise<void> => {
    stopWatching();
    const deadline = Date.now() + closeTimeoutMilliseconds;
    const problems: string[] = [];
    while (!(await sandboxEnded(info, cgroup, killSandbox)) && Date.now() < deadline) {
      await delay(closePollMilliseconds);
    }
    if (!(await sandboxEnded(info, cgroup, killSandbox))) {
      const survivors = [
        ...new Set([
          ...(await processesInPidNamespace(info['pid-namespace'])),
          ...((await cgroup?.members()) ?? []),
        ]),
      ];
      problems.push(
        `processes ${survivors.join(', ') || `of pid namespace ${info['pid-namespace']}`} were still running ${closeTimeoutMilliseconds / 1_000} s after SIGKILL`,
      );
    }
    if ((await beforeDeadline(exited, deadline)) === undefined) {
      problems.push(
        `bubblewrap (pid ${pid}) did not exit within ${closeTimeoutMilliseconds / 1_000} s of SIGKILL`,
      );
    }
    released = true;
    for (const stream of child.stdio) stream?.destroy();
    if (cgroup !== undefined) {
      await cgroup
        .remove()
        .catch((error: unknown) => problems.push(`its cgroup could not be removed: ${String(error)}`));
    }
    let removalError: unknown;
    try {
      await rm(plan.workspace, { recursive: true, force: true });
    } catch (error) {
      removalError = error;
      problems.push(`the workspace ${plan.workspace} could not be removed: ${String(error)}`);
    }
    if (problems.length > 0) {
      throw new CleanupError(`Closing the bwrap sandbox failed: ${problems.join('; ')}.`, {
        cause: removalError,
        details: { backend: 'bwrap', pid, workspace: plan.workspace, problems },
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
      if (released) return;
      if (signal === 'SIGKILL') {
        killSandbox();
        return;
      }
      // Other signals go to the command and what it started; bubblewrap's own processes would ignore them.
      void processTree(namespaceInit).then((pids) => {
        for (const member of pids.slice(1)) signalQuietly(member, signal);
      });
    },
    close() {
      closing ??= close();
      return closing;
    },
  };
}

/** Kills the sandbox again and tells whether it is gone: its pid namespace ended and its cgroup empty. */
async function sandboxEnded(
  info: SandboxInfo,
  cgroup: SandboxCgroup | undefined,
  killSandbox: () => void,
): Promise<boolean> {
  killSandbox();
  if (cgroup !== undefined) await cgroup.killAll();
  if (!(await pidNamespaceEnded(info['child-pid'], info['pid-namespace']))) return false;
  return cgroup === undefined || (await cgroup.members()).length === 0;
}

/**
 * Bubblewrap exits with the command's status, and with 128 + n when a signal n ended it, as a shell
 * does; turn that back into the signal so callers see how the program really ended.
 */
function translateExit(code: number | null, signal: NodeJS.Signals | null): SandboxExit {
  if (code !== null && code > 128 && code <= 128 + 64) {
    const name = Object.entries(constants.signals).find(([, number]) => number === code - 128)?.[0];
    if (name !== undefined) return { code: null, signal: name as NodeJS.Signals };
  }
  return { code, signal };
}

function limitOfSignal(signal: NodeJS.Signals | null): keyof SandboxLimits | undefined {
  if (signal === 'SIGXCPU') return 'cpuSeconds';
  if (signal === 'SIGXFSZ') return 'fileBytes';
  return undefined;
}

/** Samples the tree's resident memory and calls `exceeded` once it is over `limitBytes`. */
function sampleMemory(root: number, limitBytes: number, exceeded: () => void): { stop(): void } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const sample = async () => {
    const bytes = await residentBytes(await processTree(root));
    if (stopped) return;
    if (bytes > limitBytes) {
      exceeded();
      return;
    }
    timer = setTimeout(sample, memorySampleMilliseconds);
    timer.unref();
  };
  timer = setTimeout(sample, memorySampleMilliseconds);
  timer.unref();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

function delay(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

function ignore(): void {}
