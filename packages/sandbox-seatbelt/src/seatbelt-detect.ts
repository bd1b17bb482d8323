import { execFile } from 'node:child_process';
import { access, constants, mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  noSandboxCapabilities,
  type SandboxCapabilities,
  type SandboxCheck,
  type SandboxDetection,
} from '@ghost/core/sandbox';
import { listProcesses } from './process-listing.js';
import { seatbeltArguments } from './seatbelt-arguments.js';
import { launcherShellPath } from './seatbelt-launcher.js';
import { treeSampleMilliseconds } from './tree-watch.js';

/** How long the probe may run before it counts as failed. */
const probeTimeoutMilliseconds = 10_000;

/** The program the probe runs under the profile: on every Mac, and needs nothing but libSystem. */
const probeCommand = '/bin/cat';

/** What detection needs to know about the machine; the defaults describe this process. */
export interface SeatbeltDetectOptions {
  readonly sandboxExec: string;
  readonly platform: NodeJS.Platform;
  /** The parent's uid; under root the program would run as root, inside the profile. */
  readonly uid: number | undefined;
  readonly ps: string;
}

/**
 * What the seatbelt backend enforces when it can run: the profile (files, network, subprocesses),
 * the rlimits the launcher sets, the memory watch and exactly the spec's environment. Not
 * `processTreeOwnership` (macOS has no pid namespace: a descendant that leaves the process group
 * and is orphaned between two samples escapes), not `processLimit` (`RLIMIT_NPROC` counts every
 * process of the user, not the sandbox's), not `syscallFilter` (the profile denies operations, not
 * the system calls that capability lists). `filesystemIsolation` only when the parent is not
 * root, since the capability promises the program never runs as real root.
 */
export function seatbeltCapabilities(uid: number | undefined, canSampleMemory: boolean): SandboxCapabilities {
  return Object.freeze({
    ...noSandboxCapabilities,
    subprocessDenial: true,
    networkIsolation: true,
    filesystemIsolation: uid !== 0,
    memoryLimit: canSampleMemory,
    cpuLimit: true,
    fileSizeLimit: true,
    openFilesLimit: true,
    environmentIsolation: true,
  });
}

/**
 * Detects seatbelt: macOS, `sandbox-exec` executable, and a probe that runs `/bin/cat` under a
 * profile generated for it and proves the profile holds: the file in the probe's workspace is
 * read, and a file outside it is refused. Never throws; a reason says what is missing.
 */
export async function detectSeatbelt(options: SeatbeltDetectOptions): Promise<SandboxDetection> {
  const { sandboxExec, platform } = options;
  if (platform !== 'darwin') {
    return unavailable(
      `seatbelt needs macOS; this is ${platform}. On Linux use sandbox 'bwrap' (sandbox: 'native' picks it there).`,
    );
  }
  const executable = await access(sandboxExec, constants.X_OK).then(
    () => true,
    () => false,
  );
  if (!executable) {
    return unavailable(
      `${sandboxExec} is missing or not executable. It ships with macOS; if a management profile removed it, seatbelt cannot run here.`,
    );
  }
  let probe: string | undefined;
  try {
    probe = await probeDeniedRead(sandboxExec);
  } catch (error) {
    // The probe's own set-up failed (a temporary directory it could not make): nothing was proven.
    probe = `the probe could not be prepared in ${tmpdir()}: ${(error as Error).message}. Check that the temporary directory is writable.`;
  }
  if (probe !== undefined) return unavailable(probe);

  const canSampleMemory = await listProcesses(options.ps).then(
    (processes) => processes.length > 0,
    () => false,
  );
  const isRoot = options.uid === 0;
  const checks: SandboxCheck[] = [
    {
      name: 'sandbox-exec',
      status: 'enforced',
      detail: `${sandboxExec}: a probe's read outside its workspace was denied, and its own workspace read`,
    },
    {
      name: 'rlimits',
      status: 'enforced',
      detail: `RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_NOFILE and RLIMIT_CORE=0, set by ${launcherShellPath}'s ulimit before sandbox-exec`,
    },
    canSampleMemory
      ? {
          name: 'memory limit',
          status: 'fallback',
          detail: `the tree's resident size, sampled with ${options.ps} every ${treeSampleMilliseconds} ms (macOS has no cgroups)`,
        }
      : {
          name: 'memory limit',
          status: 'missing',
          detail: `${options.ps} could not list processes, so memory cannot be sampled: limits.memoryBytes is refused`,
        },
    {
      name: 'process tree',
      status: 'fallback',
      detail: `the process group, and descendants that leave it, found every ${treeSampleMilliseconds} ms; one orphaned between two samples escapes (no pid namespace on macOS), so subprocesses are denied by default`,
    },
    isRoot
      ? {
          name: 'identity',
          status: 'missing',
          detail:
            'the parent is root, so programs run as root, confined by the profile only: filesystemIsolation is not claimed. Run as a normal user.',
        }
      : {
          name: 'identity',
          status: 'enforced',
          detail: `programs run as uid ${options.uid}, the parent's own`,
        },
  ];
  return { available: true, capabilities: seatbeltCapabilities(options.uid, canSampleMemory), checks };
}

/** Runs the probe; resolves undefined when the profile held, or the reason it did not. */
async function probeDeniedRead(sandboxExec: string): Promise<string | undefined> {
  // realpath: seatbelt matches resolved paths, and $TMPDIR is under /var, a link to /private/var.
  const root = await realpath(await mkdtemp(join(tmpdir(), 'ghost-seatbelt-probe-')));
  try {
    const workspace = join(root, 'workspace');
    const outside = join(root, 'outside');
    await mkdir(workspace);
    await mkdir(outside);
    const allowed = join(workspace, 'allowed');
    const secret = join(outside, 'secret');
    await writeFile(allowed, 'ghost-probe-allowed\n');
    await writeFile(secret, 'ghost-probe-secret\n');
    const args = seatbeltArguments({
      command: probeCommand,
      args: [allowed, secret],
      env: {},
      runtimePaths: [],
      workspace,
      subprocesses: 'deny',
    });
    const run = await runProbe(sandboxExec, args);
    if (run.startError !== undefined) {
      return `${sandboxExec} could not run the probe: ${run.startError}.`;
    }
    if (!run.stdout.includes('ghost-probe-allowed')) {
      return `a program under the generated profile could not read its own workspace (${probeCommand} exited ${run.code ?? run.signal}: ${run.stderr.trim() || 'no message'}). Report this with your macOS version: the profile misses something this system needs.`;
    }
    if (run.stdout.includes('ghost-probe-secret') || run.code === 0) {
      return `${sandboxExec} ran the probe but did not deny its read of a file outside the workspace, so it enforces nothing here.`;
    }
    return undefined;
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

interface ProbeRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly startError?: string;
}

function runProbe(sandboxExec: string, args: readonly string[]): Promise<ProbeRun> {
  return new Promise((resolve) => {
    execFile(
      sandboxExec,
      [...args],
      { env: {}, timeout: probeTimeoutMilliseconds, maxBuffer: 1024 * 1024 },
      (error, stdout, stderr) => {
        const failure = error as (NodeJS.ErrnoException & { code?: unknown; signal?: NodeJS.Signals }) | null;
        if (failure !== null && typeof failure.code === 'string') {
          resolve({ code: null, signal: null, stdout, stderr, startError: failure.message });
          return;
        }
        resolve({
          code: failure === null ? 0 : ((failure.code as number | undefined) ?? null),
          signal: failure?.signal ?? null,
          stdout,
          stderr,
        });
      },
    );
  });
}

function unavailable(reason: string): SandboxDetection {
  return { available: false, reason, capabilities: noSandboxCapabilities };
}
