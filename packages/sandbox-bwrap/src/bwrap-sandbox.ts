import { stat } from 'node:fs/promises';
import {
  ConfigurationError,
  defineSandboxBackend,
  planSandboxSpawn,
  type SandboxBackendV1,
  type SandboxDetection,
  type SandboxNetwork,
  type SandboxProcess,
  type SandboxSpawnSpec,
  SandboxUnavailableError,
} from '@ghost/core';
import { type BwrapEnvironment, detectBwrap } from './bwrap-detect.js';
import { startBwrapProcess } from './bwrap-process.js';
import { createSandboxCgroup, type SandboxCgroup } from './cgroups.js';
import { buildSeccompFilter, type SeccompArchitecture } from './seccomp-filter.js';
import { sharedLibraries } from './shared-libraries.js';

/** Options for {@link createBwrapSandbox}. */
export interface BwrapSandboxOptions {
  /** The bubblewrap binary. Default: `bwrap` from `PATH` or the standard directories. */
  readonly bwrapPath?: string;
  /**
   * `'auto'` (default) bounds memory and processes with a cgroup where this process may create
   * one; `'off'` never does, so memory is bounded by sampling and `limits.processes` is refused.
   */
  readonly cgroups?: 'auto' | 'off';
}

/**
 * Creates the bubblewrap backend. Every process it starts gets new user, pid, ipc, uts, cgroup and
 * (unless `network: 'host'`) net namespaces, no capabilities and no new privileges, a seccomp
 * filter, a read-only root holding only the runtime paths and the command's shared libraries, the
 * workspace as the one writable place, a cleared environment, rlimits for CPU, file size, open
 * files and core dumps, and a cgroup (or parent-side sampling) for memory and processes.
 * `detect()` says precisely what is missing where it cannot.
 *
 * @example
 * ```ts
 * import { createRuntime } from '@ghost/core';
 * import { createBwrapSandbox } from '@ghost/sandbox-bwrap';
 *
 * const runtime = createRuntime({ sandboxes: [createBwrapSandbox({ cgroups: 'off' })] });
 * ```
 */
export function createBwrapSandbox(options: BwrapSandboxOptions = {}): SandboxBackendV1 {
  if (options.cgroups !== undefined && options.cgroups !== 'auto' && options.cgroups !== 'off') {
    throw new ConfigurationError(
      `The bwrap option cgroups must be 'auto' or 'off', got ${String(options.cgroups)}.`,
    );
  }
  let detecting: Promise<BwrapEnvironment> | undefined;
  const environment = () => {
    detecting ??= detectBwrap(options, startBwrapProcess);
    return detecting;
  };
  return defineSandboxBackend({
    kind: 'sandbox',
    specificationVersion: 'sandbox-v1',
    name: 'bwrap',
    platforms: ['linux'],
    async detect(): Promise<SandboxDetection> {
      return (await environment()).detection;
    },
    async spawn(spec: SandboxSpawnSpec): Promise<SandboxProcess> {
      const found = await environment();
      const { detection } = found;
      if (!detection.available || found.tools === undefined || found.architecture === undefined) {
        throw new SandboxUnavailableError(
          `The bwrap sandbox cannot contain programs here: ${detection.reason}`,
          {
            details: { backend: 'bwrap' },
          },
        );
      }
      const plan = planSandboxSpawn(spec, { name: 'bwrap', capabilities: detection.capabilities });
      await requireDirectory(plan.workspace, 'workspace');
      if (plan.cwd !== plan.workspace) await requireDirectory(plan.cwd, 'cwd');
      await Promise.all(
        plan.runtimePaths.map((path, index) => requireExisting(path, `runtimePaths[${index}]`)),
      );
      plan.signal?.throwIfAborted();
      const libraries = await sharedLibraries(plan.command).catch((error: unknown) => {
        throw new SandboxUnavailableError(
          `The bwrap sandbox cannot start ${plan.command}: ${(error as Error).message}`,
          {
            cause: error,
          },
        );
      });
      const cgroupLimits = {
        ...(plan.limits.memoryBytes !== undefined && found.cgroups?.memoryParent
          ? { memoryBytes: plan.limits.memoryBytes }
          : {}),
        ...(plan.limits.processes !== undefined ? { processes: plan.limits.processes } : {}),
      };
      let cgroup: SandboxCgroup | undefined;
      if (found.cgroups !== undefined && Object.keys(cgroupLimits).length > 0) {
        cgroup = await createSandboxCgroup(found.cgroups, cgroupLimits).catch((error: unknown) => {
          throw new SandboxUnavailableError(
            `The bwrap sandbox could not create the cgroup that bounds memory and processes: ${(error as Error).message}. Check that this process may still write under ${found.cgroups?.memoryParent ?? found.cgroups?.pidsParent}, or create the backend with cgroups: 'off' (memory is then sampled and limits.processes refused).`,
            { cause: error, details: { backend: 'bwrap' } },
          );
        });
      }
      try {
        return await startBwrapProcess({
          plan,
          tools: found.tools,
          sharedLibraries: libraries,
          seccompFilter: seccompFilterFor(found.architecture, plan.network, plan.subprocesses),
          ...(cgroup === undefined ? {} : { cgroup }),
          ...(plan.limits.memoryBytes !== undefined && cgroupLimits.memoryBytes === undefined
            ? { sampledMemoryBytes: plan.limits.memoryBytes }
            : {}),
        });
      } catch (error) {
        await cgroup?.remove().catch(() => undefined);
        throw error;
      }
    },
  });
}

async function requireDirectory(path: string, field: string): Promise<void> {
  const found = await requireExisting(path, field);
  if (!found.isDirectory()) {
    throw new ConfigurationError(
      `The spawn spec's ${field} ${path} is not a directory. Pass an existing directory.`,
      {
        details: { [field]: path },
      },
    );
  }
}

async function requireExisting(path: string, field: string) {
  return stat(path).catch((error: unknown) => {
    throw new ConfigurationError(
      `The spawn spec's ${field} ${path} cannot be used: ${(error as Error).message}. Pass a path that exists.`,
      { cause: error, details: { [field]: path } },
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

/** The bubblewrap backend with default options, as `sandbox: 'bwrap'` and, on Linux, `'native'` load it. */
export const bwrapSandbox: SandboxBackendV1 = createBwrapSandbox();
