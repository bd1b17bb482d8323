import type { SandboxCheck } from '@ghost/core/sandbox';
import { type BwrapIdentity, formatBwrapIdentity } from './bwrap-identity.js';
import type { BwrapSandboxOptions } from './bwrap-sandbox.js';
import type { CgroupSupport } from './cgroups.js';
import { formatSeccompPolicy, type SeccompArchitecture } from './seccomp-filter.js';

/**
 * What a working backend enforces, check by check, for `ghost doctor`: namespaces, identity,
 * filesystem, seccomp, privileges and rlimits, then the memory and process limits, which depend
 * on the cgroups that work (`cgroupProblem`: why joining one failed, when it did).
 */
export function enforcedChecks(
  identity: BwrapIdentity,
  architecture: SeccompArchitecture,
  cgroups: CgroupSupport | undefined,
  options: BwrapSandboxOptions,
  cgroupProblem?: string,
): SandboxCheck[] {
  return [
    {
      name: 'namespaces',
      status: 'enforced',
      detail:
        identity.kind === 'parent'
          ? 'user (nested ones disabled), pid, ipc, uts, cgroup, net (unless network is asked for), mount'
          : 'pid, ipc, uts, cgroup, net (unless network is asked for), mount; no user namespace, as the parent is root (nested ones are denied by seccomp)',
    },
    { name: 'identity', status: 'enforced', detail: formatBwrapIdentity(identity) },
    {
      name: 'filesystem',
      status: 'enforced',
      detail:
        "read-only tmpfs root with only the runtime paths; a writable workspace made by the kit, in a folder only the parent's user can enter (nosuid, nodev); /proc/sys read-only; /proc/cmdline and /proc/1 covered",
    },
    {
      name: 'seccomp',
      status: 'enforced',
      detail: formatSeccompPolicy({ architecture, network: 'none', subprocesses: 'deny' }),
    },
    {
      name: 'privileges',
      status: 'enforced',
      detail: 'all capabilities dropped, no new privileges, new session (no TIOCSTI)',
    },
    {
      name: 'rlimits',
      status: 'enforced',
      detail: 'RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_NOFILE, RLIMIT_CORE=0 through prlimit',
    },
    memoryCheck(cgroups, options, cgroupProblem),
    processCheck(cgroups, options, cgroupProblem),
  ];
}

function memoryCheck(
  cgroups: CgroupSupport | undefined,
  options: BwrapSandboxOptions,
  problem?: string,
): SandboxCheck {
  if (cgroups?.memoryParent !== undefined) {
    return {
      name: 'memory limit',
      status: 'enforced',
      detail: `cgroup v${cgroups.version} memory controller under ${cgroups.memoryParent}`,
    };
  }
  return {
    name: 'memory limit',
    status: 'fallback',
    detail: `no usable memory cgroup (${whyNoCgroup(options, problem)}); the parent samples the sandbox's resident memory every 50 ms and kills it over the limit`,
  };
}

function processCheck(
  cgroups: CgroupSupport | undefined,
  options: BwrapSandboxOptions,
  problem?: string,
): SandboxCheck {
  if (cgroups?.pidsParent !== undefined) {
    return {
      name: 'process limit',
      status: 'enforced',
      detail: `cgroup v${cgroups.version} pids controller under ${cgroups.pidsParent}`,
    };
  }
  return {
    name: 'process limit',
    status: 'missing',
    detail: `no usable pids cgroup (${whyNoCgroup(options, problem)}); limits.processes is refused, and subprocess denial (code mode's default) keeps the sandbox to one process`,
  };
}

function whyNoCgroup(options: BwrapSandboxOptions, problem?: string): string {
  if (options.cgroups === 'off') return "cgroups: 'off' was set";
  if (problem !== undefined) return `joining one failed: ${problem}`;
  return 'this process may not create cgroups; on cgroup v2 run Ghost in a delegated cgroup (systemd Delegate=yes with DelegateSubgroup=)';
}
