import { type ChildProcess, spawn } from 'node:child_process';
import { constants as fileConstants } from 'node:fs';
import { open } from 'node:fs/promises';
import { constants } from 'node:os';
import type { Duplex, Readable } from 'node:stream';
import {
  BoundedOutputBuffer,
  beforeDeadline,
  ignoreLaterErrors,
  type ReapRegistration,
  reapOnParentDeath,
  type SandboxExit,
  type SandboxLimits,
  type SandboxPathPlan,
  type SandboxProcess,
  type SandboxProcessTree,
  type SandboxSpawnPlan,
  SandboxUnavailableError,
  sandboxCloseTimeoutMilliseconds,
  streamsSettled,
  superviseSandboxProcess,
} from '@ghost/core/sandbox';
import { bwrapArguments, programIdPositions } from './bwrap-arguments.js';
import { type BwrapIdentity, type ProgramIds, programIdsOf } from './bwrap-identity.js';
import { launchCommand, launcherFailureCode, type MachineTools, parentGoneCode } from './bwrap-launch.js';
import type { SandboxCgroup } from './cgroups.js';
import {
  pidNamespaceEnded,
  processesInPidNamespace,
  processTree,
  signalQuietly,
  treeResidentBytesSync,
} from './process-tree.js';
import { type BwrapStartFacts, reachStartStep } from './start-steps.js';

/** How often the parent samples the tree's memory when no cgroup bounds it. */
const memorySampleMilliseconds = 10;

/** How long a failed start waits for bubblewrap's message to arrive on stderr. */
const startFailureDrainMilliseconds = 250;

/** What bubblewrap writes to `--info-fd` once the sandbox exists. */
interface SandboxInfo {
  /** The pid, seen from outside, of the pid namespace's init (bubblewrap's reaper); killing it ends the namespace. */
  readonly 'child-pid': number;
  readonly 'pid-namespace': number;
}

/** Everything {@link startBwrapProcess} needs: the checked spec and what the backend prepared. */
export interface BwrapProcessOptions {
  readonly plan: SandboxSpawnPlan;
  /** The plan's paths made real, and the links to recreate. */
  readonly paths: SandboxPathPlan;
  readonly tools: MachineTools;
  readonly sharedLibraries: readonly string[];
  /** Who the program runs as. */
  readonly identity: BwrapIdentity;
  /** The classic BPF program bubblewrap loads, when the backend filters system calls. */
  readonly seccompFilter?: Buffer;
  /** The cgroup that bounds memory and processes, when the machine offers one. */
  readonly cgroup?: SandboxCgroup;
  /** When set, the parent enforces `memoryBytes` by sampling, because no cgroup does. */
  readonly sampledMemoryBytes?: number;
}

/**
 * Starts bubblewrap for a planned spec and resolves once the sandbox exists (bubblewrap reported
 * its namespaces), or rejects with a `SandboxUnavailableError` carrying bubblewrap's own message.
 *
 * The launcher waits for its go line, which is sent only once the launcher is in the hands of the
 * parent's reaper (`reapOnParentDeath`): should the parent die at any moment from then on, the
 * reaper stops the launcher, then bubblewrap's init and everything below it, and kills them all,
 * so no init is left running (as root, with a root parent) whatever step the start was at.
 * With a root parent the program's ids are the range's start plus the launcher's pid, so they are
 * known once it runs: the workspace is handed to them, and the go line carries them.
 */
export async function startBwrapProcess(options: BwrapProcessOptions): Promise<SandboxProcess> {
  const { plan, identity } = options;
  const channelCount = plan.extraFds;
  const seccompFd = options.seccompFilter === undefined ? undefined : 3 + channelCount;
  const emptyFileFd = 3 + channelCount + (seccompFd === undefined ? 0 : 1);
  const infoFd = emptyFileFd + 1;
  const goFd = infoFd + 1;
  const args = bwrapArguments(plan, {
    paths: options.paths,
    sharedLibraries: options.sharedLibraries,
    identity,
    emptyFileFd,
    infoFd,
    ...(seccompFd === undefined ? {} : { seccompFd }),
  });
  const positions = identity.kind === 'dropped' ? programIdPositions(args, plan) : undefined;
  const [command, launchArgs] = launchCommand(
    {
      tools: options.tools,
      keepBelow: infoFd + 1,
      goFd,
      cgroupJoinFiles: options.cgroup?.joinFiles ?? [],
      limits: plan.limits,
      ...(positions === undefined ? {} : { programIdPositions: positions }),
    },
    args,
  );
  const child = spawn(command, launchArgs, {
    env: {},
    stdio: ['ignore', 'pipe', 'pipe', ...Array.from({ length: goFd - 2 }, () => 'pipe' as const)],
  });
  // A pipe whose far end dies mid-transfer emits EPIPE or ECONNRESET; that is the sandbox
  // ending, which `exited` reports, not an error to crash the parent with.
  ignoreLaterErrors(child);
  const stderr = new BoundedOutputBuffer();
  child.stderr?.on('data', (chunk: Buffer) => stderr.append(chunk));
  const facts: BwrapStartFacts = {
    workspace: plan.workspace,
    cgroups: options.cgroup?.directories ?? [],
    ...(child.pid === undefined ? {} : { launcherPid: child.pid }),
  };
  reachStartStep('launcher started', facts);
  let registration: ReapRegistration | undefined;
  let info: SandboxInfo;
  try {
    // Its 'error' event (the launcher could not be started) is what readInfo reports.
    const reading = readInfo(child, infoFd);
    reading.catch(() => undefined);
    if (child.pid !== undefined) {
      registration = await reapOnParentDeath({ process: child.pid });
      reachStartStep('launcher registered', facts);
      const ids = identity.kind === 'dropped' ? await dropTo(identity, child.pid, plan) : undefined;
      if (seccompFd !== undefined) (child.stdio[seccompFd] as Duplex).end(options.seccompFilter);
      (child.stdio[emptyFileFd] as Duplex).end();
      (child.stdio[goFd] as Duplex).end(`${ids?.uid ?? -1}\n`);
      reachStartStep('bubblewrap starting', facts);
    }
    info = await reading;
  } catch (error) {
    child.kill('SIGKILL');
    // Its cgroup can be removed only once it has exited, and its message may still be in the pipe.
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
    await beforeDeadline(exited, Date.now() + sandboxCloseTimeoutMilliseconds);
    await streamsSettled([child.stderr!], startFailureDrainMilliseconds);
    for (const stream of child.stdio) stream?.destroy();
    await registration?.release();
    if (SandboxUnavailableError.isInstance(error)) throw error;
    const detail = (stderr.text.trim() || (error as Error).message).replace(/\.$/, '');
    throw new SandboxUnavailableError(
      `bubblewrap could not start the sandbox: ${detail}. Run ghost-doctor to see what this machine enforces and what is missing.`,
      {
        cause: error,
        backend: 'bwrap',
        command: plan.command,
      },
    );
  }
  reachStartStep('sandbox started', facts);
  return superviseBwrapProcess(child, info, stderr, options, registration);
}

/**
 * A root parent's program ids for the launcher with this pid, with the workspace handed to them:
 * the directory itself (what the caller put inside keeps its owner), opened without following a
 * link, so only the workspace the kit made is ever given away.
 */
async function dropTo(
  identity: Extract<BwrapIdentity, { kind: 'dropped' }>,
  launcherPid: number,
  plan: SandboxSpawnPlan,
): Promise<ProgramIds> {
  const ids = programIdsOf(identity.ids, launcherPid);
  if (ids === undefined) {
    throw new SandboxUnavailableError(
      `The bwrap sandbox gives each program the id ${identity.ids.first} + the pid of its launcher, and pid ${launcherPid} is past the ${identity.ids.count} ids of unprivilegedIds: give a range at least as large as /proc/sys/kernel/pid_max.`,
      { backend: 'bwrap' },
    );
  }
  try {
    const directory = await open(
      plan.workspace,
      fileConstants.O_RDONLY | fileConstants.O_DIRECTORY | fileConstants.O_NOFOLLOW,
    );
    try {
      await directory.chown(ids.uid, ids.gid);
    } finally {
      await directory.close();
    }
  } catch (error) {
    throw new SandboxUnavailableError(
      `The bwrap sandbox could not give the workspace ${plan.workspace} to uid ${ids.uid}, gid ${ids.gid}, the identity its program runs as because the parent is root: ${(error as Error).message}. Use a workspace on a filesystem that allows chown (not one mounted with root squashing).`,
      { cause: error, backend: 'bwrap', path: plan.workspace },
    );
  }
  return ids;
}

/** Resolves with bubblewrap's info JSON, or rejects if it exits (or fails to start) first. */
function readInfo(child: ChildProcess, infoFd: number): Promise<SandboxInfo> {
  const stream = child.stdio[infoFd] as Readable;
  return new Promise((resolve, reject) => {
    let text = '';
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      const why =
        code === launcherFailureCode
          ? 'the launcher could not join the cgroup or place the program id'
          : code === parentGoneCode
            ? 'the launcher was not sent its go line'
            : `exit ${code ?? signal}`;
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

/** Hands the started bubblewrap to the kit's supervision, with what only bwrap knows about its tree. */
function superviseBwrapProcess(
  child: ChildProcess,
  info: SandboxInfo,
  stderr: BoundedOutputBuffer,
  options: BwrapProcessOptions,
  registration: ReapRegistration | undefined,
): SandboxProcess {
  const { plan, cgroup } = options;
  const pid = child.pid!;
  const sampledMemoryBytes = options.sampledMemoryBytes;
  return superviseSandboxProcess({
    backend: 'bwrap',
    plan,
    child,
    stderr,
    tree: bwrapProcessTree(pid, info, cgroup, registration),
    async interpretExit(exit) {
      const translated = translateExit(exit.code, exit.signal);
      if (cgroup !== undefined && (await cgroup.oomKilled())) {
        return { ...translated, limitExceeded: 'memoryBytes' };
      }
      return translated;
    },
    ...(sampledMemoryBytes === undefined
      ? {}
      : {
          watchLimits(exceeded: (limit: keyof SandboxLimits) => void) {
            const sampler = sampleMemory(pid, sampledMemoryBytes, () => exceeded('memoryBytes'));
            return () => sampler.stop();
          },
        }),
  });
}

/**
 * The sandbox's processes as bubblewrap holds them: a pid namespace whose init, once killed,
 * takes every other process of the namespace with it, and the cgroup when there is one. Released,
 * it removes the cgroup and takes the launcher back from the reaper, once it saw everything end.
 */
function bwrapProcessTree(
  pid: number,
  info: SandboxInfo,
  cgroup: SandboxCgroup | undefined,
  registration: ReapRegistration | undefined,
): SandboxProcessTree {
  let hasEnded = false;
  const namespaceInit = info['child-pid'];
  const namespaceInode = info['pid-namespace'];
  const killSandbox = () => {
    // The namespace's init first: when it dies the kernel kills everything else in the namespace.
    signalQuietly(namespaceInit, 'SIGKILL');
    signalQuietly(pid, 'SIGKILL');
  };
  return {
    signal(signal) {
      if (signal === 'SIGKILL') {
        killSandbox();
        return;
      }
      // Other signals go to the command and what it started; bubblewrap's own processes would ignore them.
      void processTree(namespaceInit).then((pids) => {
        for (const member of pids.slice(1)) signalQuietly(member, signal);
      });
    },
    async terminate() {
      killSandbox();
      if (cgroup !== undefined) await cgroup.killAll();
      if (!(await pidNamespaceEnded(namespaceInit, namespaceInode))) return false;
      hasEnded = cgroup === undefined || (await cgroup.members()).length === 0;
      return hasEnded;
    },
    async summarizeSurvivors() {
      const survivors = [
        ...new Set([
          ...(await processesInPidNamespace(namespaceInode)),
          ...((await cgroup?.members()) ?? []),
        ]),
      ];
      return `processes ${survivors.join(', ') || `of pid namespace ${namespaceInode}`}`;
    },
    async release() {
      try {
        await cgroup?.remove();
      } finally {
        // While anything may still run, the reaper keeps the launcher, to end it with this process.
        if (hasEnded) await registration?.release();
      }
    },
  };
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

/** Samples the tree's resident memory and calls `exceeded` once it is over `limitBytes`. */
function sampleMemory(root: number, limitBytes: number, exceeded: () => void): { stop(): void } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const sample = () => {
    const bytes = treeResidentBytesSync(root);
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
