import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import {
  ConfigurationError,
  planSandboxPaths,
  planSandboxSpawn,
  type SandboxNetwork,
  type SandboxProcess,
  type SandboxSpawnPlan,
  type SandboxSpawnSpec,
  SandboxUnavailableError,
} from '@ghost/core/sandbox';
import type { BwrapEnvironment } from './bwrap-detect.js';
import { isUsableByOthers } from './bwrap-identity.js';
import { startBwrapProcess } from './bwrap-process.js';
import {
  type CgroupSupport,
  createSandboxCgroup,
  type SandboxCgroup,
  type SandboxCgroupLimits,
} from './cgroups.js';
import { buildSeccompFilter, type SeccompArchitecture } from './seccomp-filter.js';
import { sharedLibraries } from './shared-libraries.js';
import { reachStartStep } from './start-steps.js';

/**
 * Starts one program in a bubblewrap sandbox with what detection found on this machine, or throws
 * a `SandboxUnavailableError` where it found bubblewrap cannot contain programs. When bubblewrap
 * itself fails, `forgetDetection` drops the cached detection, which may no longer hold.
 */
export async function spawnInBwrap(
  found: BwrapEnvironment,
  spec: SandboxSpawnSpec,
  forgetDetection: () => Promise<void>,
): Promise<SandboxProcess> {
  const { detection } = found;
  const { identity } = found;
  if (
    !detection.available ||
    found.tools === undefined ||
    found.architecture === undefined ||
    identity === undefined
  ) {
    throw new SandboxUnavailableError(`The bwrap sandbox cannot contain programs here: ${detection.reason}`, {
      backend: 'bwrap',
    });
  }
  const plan = planSandboxSpawn(spec, { name: 'bwrap', capabilities: detection.capabilities });
  // Real paths to bind, and the links to recreate outside them: bubblewrap cannot bind onto a
  // link inside a directory it has already bound, and Node resolves a linked package's
  // dependencies from the link's own location.
  const paths = await planSandboxPaths(plan);
  if (identity.kind === 'dropped') await requireUsableByProgramIdentity(plan);
  plan.signal?.throwIfAborted();
  const libraries = await sharedLibraries(plan.command).catch((error: unknown) => {
    throw new SandboxUnavailableError(
      `The bwrap sandbox cannot start ${plan.command}: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  });
  const cgroupLimits = cgroupLimitsFor(plan, found.cgroups);
  let cgroup: SandboxCgroup | undefined;
  if (found.cgroups !== undefined && Object.keys(cgroupLimits).length > 0) {
    cgroup = await createCgroup(found.cgroups, cgroupLimits);
  }
  reachStartStep('cgroups made', { workspace: plan.workspace, cgroups: cgroup?.directories ?? [] });
  try {
    return await startBwrapProcess({
      plan,
      paths,
      tools: found.tools,
      sharedLibraries: libraries,
      identity,
      seccompFilter: seccompFilterFor(found.architecture, plan.network, plan.subprocesses),
      ...(cgroup === undefined ? {} : { cgroup }),
      ...(plan.limits.memoryBytes !== undefined && cgroupLimits.memoryBytes === undefined
        ? { sampledMemoryBytes: plan.limits.memoryBytes }
        : {}),
    });
  } catch (error) {
    await cgroup?.remove().catch(() => undefined);
    // bubblewrap itself failed: what was detected (maybe by another process) may no longer
    // hold, so the next process proves the sandbox again.
    if (SandboxUnavailableError.isInstance(error)) await forgetDetection();
    throw error;
  }
}

/**
 * The limits a cgroup enforces: memory where there is a memory controller (else it is sampled
 * from the parent), and processes.
 */
function cgroupLimitsFor(plan: SandboxSpawnPlan, cgroups: CgroupSupport | undefined): SandboxCgroupLimits {
  return {
    ...(plan.limits.memoryBytes !== undefined && cgroups?.memoryParent
      ? { memoryBytes: plan.limits.memoryBytes }
      : {}),
    ...(plan.limits.processes !== undefined ? { processes: plan.limits.processes } : {}),
  };
}

async function createCgroup(cgroups: CgroupSupport, limits: SandboxCgroupLimits): Promise<SandboxCgroup> {
  return createSandboxCgroup(cgroups, limits).catch((error: unknown) => {
    throw new SandboxUnavailableError(
      `The bwrap sandbox could not create the cgroup that bounds memory and processes: ${(error as Error).message}. Check that this process may still write under ${cgroups.memoryParent ?? cgroups.pidsParent}, or create the backend with cgroups: 'off' (memory is then sampled and limits.processes refused).`,
      { cause: error, backend: 'bwrap' },
    );
  });
}

/** Only a diagnosis: what bubblewrap binds is what `planSandboxPaths` resolved. */
async function requireUsableByProgramIdentity(plan: SandboxSpawnPlan): Promise<void> {
  requireUsable(plan.command, 'command', await requireExisting(plan.command, 'command'), 'execute');
  for (const [index, path] of plan.runtimePaths.entries()) {
    const field = `runtimePaths[${index}]`;
    requireUsable(path, field, await requireExisting(path, field), 'read');
  }
}

/**
 * With a root parent the program runs as an identity of its own, which owns no file and has no
 * groups, so a runtime path others cannot read would fail inside with a bare EACCES; say so here,
 * with what to do.
 */
function requireUsable(path: string, field: string, stats: Stats, purpose: 'read' | 'execute'): void {
  if (isUsableByOthers(stats, purpose)) return;
  const needed = purpose === 'execute' ? 'execute' : stats.isDirectory() ? 'read and search' : 'read';
  const grant = purpose === 'execute' || stats.isDirectory() ? 'rx' : 'r';
  throw new ConfigurationError(
    `The spawn spec's ${field} ${path} is mode ${(stats.mode & 0o7777).toString(8)}, owner ${stats.uid}: programs run as an unprivileged identity of their own, with no groups, because this process is root, and cannot ${needed} it. Let others ${needed} it (chmod o+${grant}).`,
    { option: field, path },
  );
}

async function requireExisting(path: string, field: string) {
  return stat(path).catch((error: unknown) => {
    throw new ConfigurationError(
      `The spawn spec's ${field} ${path} cannot be used: ${(error as Error).message}. Pass a path that exists.`,
      { cause: error, option: field, path },
    );
  });
}

// Four policies at most; each program reuses its policy's filter instead of building it again.
const seccompFilters = new Map<string, Buffer>();

function seccompFilterFor(
  architecture: SeccompArchitecture,
  network: SandboxNetwork,
  subprocesses: 'allow' | 'deny',
): Buffer {
  const key = `${architecture}/${network}/${subprocesses}`;
  let filter = seccompFilters.get(key);
  if (filter === undefined) {
    filter = buildSeccompFilter({ architecture, network, subprocesses });
    seccompFilters.set(key, filter);
  }
  return filter;
}
