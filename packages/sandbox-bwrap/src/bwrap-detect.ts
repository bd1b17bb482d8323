import { execFile } from 'node:child_process';
import { readFile, realpath } from 'node:fs/promises';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import {
  createSandboxWorkspace,
  noSandboxCapabilities,
  planSandboxPaths,
  planSandboxSpawn,
  removeSandboxWorkspace,
  type SandboxCapabilities,
  type SandboxCheck,
  type SandboxDetection,
  type SandboxProcess,
} from '@ghost/core/sandbox';
import { type BwrapIdentity, defaultUnprivilegedIds, programIdsOf } from './bwrap-identity.js';
import type { MachineTools } from './bwrap-launch.js';
import type { BwrapProcessOptions } from './bwrap-process.js';
import type { BwrapSandboxOptions } from './bwrap-sandbox.js';
import {
  type CgroupSupport,
  createSandboxCgroup,
  detectCgroups,
  removeStaleSandboxCgroups,
} from './cgroups.js';
import { enforcedChecks } from './enforced-checks.js';
import { explainStartFailure } from './explain-start-failure.js';
import { findExecutable } from './find-executable.js';
import { buildSeccompFilter, type SeccompArchitecture, seccompArchitecture } from './seccomp-filter.js';
import { sharedLibraries } from './shared-libraries.js';

const run = promisify(execFile);

/** What the backend found on this machine: the answer of `detect()` and what `spawn` runs with. */
export interface BwrapEnvironment {
  readonly detection: SandboxDetection;
  readonly tools?: MachineTools;
  readonly architecture?: SeccompArchitecture;
  readonly cgroups?: CgroupSupport;
  /** Who programs run as: the parent's ids, or ids of their own from a range when the parent is root. */
  readonly identity?: BwrapIdentity;
}

/** What the backend reports where it works: everything, the process limit only with a pids cgroup. */
export function bwrapCapabilities(processLimit: boolean): SandboxCapabilities {
  return {
    processTreeOwnership: true,
    subprocessDenial: true,
    networkIsolation: true,
    filesystemIsolation: true,
    memoryLimit: true,
    cpuLimit: true,
    fileSizeLimit: true,
    openFilesLimit: true,
    processLimit,
    syscallFilter: true,
    environmentIsolation: true,
  };
}

/** Starts one sandboxed process; injected so detection can be tested without bubblewrap. */
export type StartProcess = (options: BwrapProcessOptions) => Promise<SandboxProcess>;

/**
 * Checks, in the order a user would fix them, everything the backend relies on, and finally starts
 * one real sandbox with the whole policy (namespaces, seccomp, rlimits, cgroup) to prove it. The
 * first problem found becomes `reason`, written so the user knows what to run; every check is
 * listed in `checks` for `ghost doctor`.
 */
export async function detectBwrap(
  options: BwrapSandboxOptions,
  start: StartProcess,
): Promise<BwrapEnvironment> {
  const checks: SandboxCheck[] = [];
  const unavailable = (reason: string): BwrapEnvironment => ({
    detection: { available: false, reason, capabilities: noSandboxCapabilities, checks },
  });
  if (process.platform !== 'linux') {
    return unavailable(`bubblewrap runs only on Linux, and this is ${process.platform}.`);
  }
  const tools = await findMachineTools(options, checks);
  if (typeof tools === 'string') return unavailable(tools);
  const program = await programIdentity(options, checks);
  if (typeof program === 'string') return unavailable(program);
  const { identity, appArmorRestricted } = program;
  const seccomp = await seccompSupport(checks);
  if (seccomp.problem !== undefined) return unavailable(seccomp.problem);
  const { architecture } = seccomp;
  const cgroups = options.cgroups === 'off' ? undefined : await detectCgroups();
  if (cgroups !== undefined) await removeStaleSandboxCgroups(cgroups);
  const proof = await proveSandbox(tools, architecture, cgroups, identity, start);
  if (proof.problem !== undefined) {
    checks.push({ name: 'namespaces', status: 'missing', detail: proof.problem });
    return unavailable(explainStartFailure(proof.problem, appArmorRestricted, identity));
  }
  const usableCgroups = proof.cgroupsWork ? cgroups : undefined;
  checks.push(...enforcedChecks(identity, architecture, usableCgroups, options, proof.cgroupProblem));
  return {
    detection: {
      available: true,
      capabilities: bwrapCapabilities(usableCgroups?.pidsParent !== undefined),
      checks,
    },
    tools,
    architecture,
    identity,
    ...(usableCgroups === undefined ? {} : { cgroups: usableCgroups }),
  };
}

/** bubblewrap and the launcher's tools (bash, prlimit); or what is missing, as the reason to show. */
async function findMachineTools(
  options: BwrapSandboxOptions,
  checks: SandboxCheck[],
): Promise<MachineTools | string> {
  const bwrap = await findExecutable(options.bwrapPath ?? 'bwrap');
  if (bwrap === undefined) {
    checks.push({ name: 'bubblewrap', status: 'missing', detail: 'bwrap is not installed' });
    return options.bwrapPath === undefined
      ? 'bubblewrap is not installed: install it with `apt-get install bubblewrap` (Debian, Ubuntu), `dnf install bubblewrap` (Fedora) or `apk add bubblewrap` (Alpine).'
      : `the bwrap binary ${options.bwrapPath} does not exist or is not executable.`;
  }
  checks.push({ name: 'bubblewrap', status: 'enforced', detail: `${bwrap} (${await bwrapVersion(bwrap)})` });
  const bash = await findExecutable('bash');
  const prlimit = await findExecutable('prlimit');
  if (bash === undefined || prlimit === undefined) {
    const missing = [
      bash === undefined ? 'bash' : undefined,
      prlimit === undefined ? 'prlimit (util-linux)' : undefined,
    ]
      .filter(Boolean)
      .join(' and ');
    checks.push({ name: 'launcher', status: 'missing', detail: `${missing} not found` });
    return `the sandbox launcher needs ${missing}: install them with \`apt-get install bash util-linux\`.`;
  }
  return { bwrap, bash, prlimit };
}

/**
 * Who programs run as, and whether AppArmor restricts user namespaces (to explain a failed
 * start); or what is missing, as the reason to show. A root parent needs no user namespace
 * (bubblewrap sets up as root) but setpriv to drop to the unprivileged identity; any other parent
 * runs bubblewrap in a user namespace of its own.
 */
async function programIdentity(
  options: BwrapSandboxOptions,
  checks: SandboxCheck[],
): Promise<{ identity: BwrapIdentity; appArmorRestricted: boolean } | string> {
  const isRootParent = process.getuid?.() === 0;
  if (isRootParent) {
    const dropped = await droppedIdentity(options);
    if (typeof dropped === 'string') {
      checks.push({ name: 'identity', status: 'missing', detail: dropped });
      return dropped;
    }
    return { identity: dropped, appArmorRestricted: false };
  }
  const namespaces = await userNamespaces();
  if (namespaces.problem !== undefined) {
    checks.push({ name: 'user namespaces', status: 'missing', detail: namespaces.problem });
    return namespaces.problem;
  }
  return {
    identity: { kind: 'parent', uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 },
    appArmorRestricted: namespaces.appArmorRestricted,
  };
}

/** The architecture of this machine's seccomp filter; or, where none can be loaded, the reason to show. */
async function seccompSupport(
  checks: SandboxCheck[],
): Promise<{ architecture: SeccompArchitecture; problem?: undefined } | { problem: string }> {
  const architecture = seccompArchitecture();
  if (architecture === undefined) {
    checks.push({ name: 'seccomp', status: 'missing', detail: `no filter for ${process.arch}` });
    return {
      problem: `Ghost's seccomp filter covers x64 and arm64, and this machine is ${process.arch}; without it the sandbox cannot deny dangerous system calls.`,
    };
  }
  if (!(await kernelHasSeccomp())) {
    checks.push({ name: 'seccomp', status: 'missing', detail: 'the kernel has no seccomp filter support' });
    return {
      problem: 'the kernel has no seccomp filter support (CONFIG_SECCOMP_FILTER); use a kernel with it.',
    };
  }
  return { architecture };
}

/**
 * The identity a root parent's programs run as, with `setpriv` (util-linux) to get there; or what
 * is missing, as the reason to show.
 */
async function droppedIdentity(options: BwrapSandboxOptions): Promise<BwrapIdentity | string> {
  const found = await findExecutable('setpriv');
  if (found === undefined) {
    return 'this process runs as root, and the sandbox starts programs as an unprivileged user with setpriv (util-linux), which is not installed: install it with `apt-get install util-linux` (the `setpriv` package on Debian 10 and older), `dnf install util-linux` or `apk add setpriv`, or run Ghost as a non-root user.';
  }
  const ids = options.unprivilegedIds ?? defaultUnprivilegedIds;
  // Each program's id is the range's start plus its launcher's pid: every pid needs one.
  const pidMax = Number((await readFile('/proc/sys/kernel/pid_max', 'utf8').catch(() => '')).trim());
  if (Number.isSafeInteger(pidMax) && pidMax > ids.count) {
    return `this process runs as root, and each program runs as the id ${ids.first} + the pid of its launcher, but unprivilegedIds holds ${ids.count} ids and pids here go up to ${pidMax} (kernel.pid_max): give createBwrapSandbox({ unprivilegedIds }) a count of at least ${pidMax}.`;
  }
  try {
    const setpriv = await realpath(found);
    return { kind: 'dropped', ids, setpriv, setprivLibraries: await sharedLibraries(setpriv) };
  } catch (error) {
    return `setpriv (${found}) cannot be used: ${(error as Error).message}`;
  }
}

async function bwrapVersion(bwrap: string): Promise<string> {
  try {
    const { stdout } = await run(bwrap, ['--version'], { env: {}, timeout: 5_000 });
    return stdout.trim();
  } catch {
    return 'version unknown';
  }
}

/**
 * Reads the sysctls that turn unprivileged user namespaces off, and says which to change. Only a
 * non-root parent needs them: a root parent's sandbox has no user namespace.
 */
async function userNamespaces(): Promise<{ problem?: string; appArmorRestricted: boolean }> {
  const read = (path: string) =>
    readFile(path, 'utf8').then(
      (text) => text.trim(),
      () => undefined,
    );
  const [maxNamespaces, debianSwitch, appArmor] = await Promise.all([
    read('/proc/sys/user/max_user_namespaces'),
    read('/proc/sys/kernel/unprivileged_userns_clone'),
    read('/proc/sys/kernel/apparmor_restrict_unprivileged_userns'),
  ]);
  // Ubuntu 24.04+ allows them only to programs whose AppArmor profile grants `userns`; whether bwrap
  // has one shows only when the probe runs, so this just shapes the message if it fails.
  const appArmorRestricted = appArmor === '1';
  if (maxNamespaces === '0') {
    return {
      problem:
        'user namespaces are disabled (user.max_user_namespaces is 0): run `sysctl -w user.max_user_namespaces=15000` as root, and set it in /etc/sysctl.d to keep it.',
      appArmorRestricted,
    };
  }
  if (debianSwitch === '0') {
    return {
      problem:
        'unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone is 0): run `sysctl -w kernel.unprivileged_userns_clone=1` as root, and set it in /etc/sysctl.d to keep it.',
      appArmorRestricted,
    };
  }
  return { appArmorRestricted };
}

async function kernelHasSeccomp(): Promise<boolean> {
  const status = await readFile('/proc/self/status', 'utf8').catch(() => '');
  return /^Seccomp:/m.test(status);
}

interface Proof {
  readonly problem?: string;
  readonly cgroupsWork: boolean;
  readonly cgroupProblem?: string;
}

/**
 * Starts Node in a sandbox with the whole policy and checks that it exits cleanly, having run as
 * the expected uid and gid. Tried with the cgroup first (when there is one), and without it if
 * joining the cgroup is what failed.
 */
async function proveSandbox(
  tools: MachineTools,
  architecture: SeccompArchitecture,
  cgroups: CgroupSupport | undefined,
  identity: BwrapIdentity,
  start: StartProcess,
): Promise<Proof> {
  const probe: SandboxProbe = { tools, architecture, cgroups, identity, start };
  if (cgroups === undefined) {
    const problem = await runProbe(probe, false);
    return problem === undefined ? { cgroupsWork: false } : { problem, cgroupsWork: false };
  }
  const withCgroup = await runProbe(probe, true);
  if (withCgroup === undefined) return { cgroupsWork: true };
  const without = await runProbe(probe, false);
  if (without !== undefined) return { problem: without, cgroupsWork: false };
  return { cgroupsWork: false, cgroupProblem: withCgroup };
}

/** What one probe runs with. */
interface SandboxProbe {
  readonly tools: MachineTools;
  readonly architecture: SeccompArchitecture;
  readonly cgroups: CgroupSupport | undefined;
  readonly identity: BwrapIdentity;
  readonly start: StartProcess;
}

/** Runs the probe program once, in the cgroup or not; what went wrong, or undefined when it ran as it should. */
async function runProbe(probe: SandboxProbe, withCgroup: boolean): Promise<string | undefined> {
  const { tools, architecture, cgroups, identity, start } = probe;
  const workspace = await createSandboxWorkspace({ prefix: 'ghost-bwrap-probe-' });
  const command = await realpath(process.execPath);
  const plan = planSandboxSpawn(
    {
      command,
      args: ['-e', "process.stdout.write(process.getuid() + ' ' + process.getgid())"],
      env: {},
      runtimePaths: [dirname(command)],
      workspace,
      subprocesses: 'deny',
      limits: { cpuSeconds: 10, fileBytes: 1_000_000, openFiles: 256, wallSeconds: 30 },
    },
    { name: 'bwrap', capabilities: bwrapCapabilities(false) },
  );
  const cgroup =
    withCgroup && cgroups !== undefined
      ? await createSandboxCgroup(cgroups, { memoryBytes: 512 * 1024 * 1024, processes: 64 }).catch(
          () => undefined,
        )
      : undefined;
  let child: SandboxProcess | undefined;
  try {
    child = await start({
      plan,
      paths: await planSandboxPaths(plan),
      tools,
      sharedLibraries: await sharedLibraries(command),
      identity,
      seccompFilter: buildSeccompFilter({ architecture, network: 'none', subprocesses: 'deny' }),
      ...(cgroup === undefined ? {} : { cgroup }),
    });
    const exit = await child.exited;
    if (exit.code !== 0) {
      return `a probe program in the sandbox exited with ${exit.code ?? exit.signal}: ${child.stderr.text.trim()}`;
    }
    const ids = identity.kind === 'parent' ? identity : programIdsOf(identity.ids, child.pid);
    const expected = `${ids?.uid} ${ids?.gid}`;
    if (child.stdout.text !== expected) {
      return `a probe program in the sandbox ran as uid and gid "${child.stdout.text}", not ${expected}`;
    }
    return undefined;
  } catch (error) {
    // bubblewrap's own words; the advice to run ghost-doctor is for spawns, not for the doctor itself.
    return (error as Error).message
      .replace(/^bubblewrap could not start the sandbox: /, '')
      .replace(/ Run ghost-doctor to see .*$/, '');
  } finally {
    if (child !== undefined) await child.close().catch(() => undefined);
    else {
      await cgroup?.remove().catch(() => undefined);
      await removeSandboxWorkspace(workspace);
    }
  }
}
