import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import {
  ConfigurationError,
  defineSandboxBackend,
  planSandboxPaths,
  planSandboxSpawn,
  type SandboxBackendV1,
  type SandboxDetection,
  type SandboxNetwork,
  type SandboxProcess,
  type SandboxSpawnSpec,
  SandboxUnavailableError,
} from '@ghost/core/sandbox';
import { checkUnprivilegedIds, isUsableByOthers, type UnprivilegedIds } from './bwrap-identity.js';
import { startBwrapProcess } from './bwrap-process.js';
import { type CachedBwrapEnvironment, detectBwrapCached } from './cached-bwrap-detection.js';
import { createSandboxCgroup, type SandboxCgroup } from './cgroups.js';
import { defaultDetectionCacheDirectory } from './detection-cache.js';
import { buildSeccompFilter, type SeccompArchitecture } from './seccomp-filter.js';
import { sharedLibraries } from './shared-libraries.js';
import { reachStartStep } from './start-steps.js';

/** Options for {@link createBwrapSandbox}. */
export interface BwrapSandboxOptions {
  /** The bubblewrap binary. Default: `bwrap` from `PATH` or the standard directories. */
  readonly bwrapPath?: string;
  /**
   * `'auto'` (default) bounds memory and processes with a cgroup where this process may create
   * one; `'off'` never does, so memory is bounded by sampling and `limits.processes` is refused.
   */
  readonly cgroups?: 'auto' | 'off';
  /**
   * The ids programs run as when this process runs as root: each program gets uid and gid
   * `first + <the pid of its launcher>`, an identity no other sandbox on the machine has while it
   * runs, never 0. Default: 4,194,304 ids from 2,113,929,216 (0x7E000000); `count` must be at
   * least the kernel's `pid_max`. Programs never run as real root: bubblewrap sets the sandbox up
   * as root and the program starts as its identity, with no groups and no capabilities, and the
   * workspace is handed to it. Runtime paths must then be readable by others (their own mode bits;
   * their parent directories need not be). Choose a range no user or container of this machine
   * uses. With a non-root parent programs run as the parent's own uid and this is not used.
   */
  readonly unprivilegedIds?: UnprivilegedIds;
  /**
   * Where `detect()` caches what it found, so the next process on this machine skips the proof
   * that starts a sandbox (see `docs/decisions/2026-12-04-import-and-session-open-time.md`).
   * `'auto'` (default): `$XDG_CACHE_HOME/ghost`, else `~/.cache/ghost`. `{ directory }`: that
   * directory. `'off'`: detect in every process. An entry holds only while bubblewrap's binary
   * (path, inode, size, modification time: a new version is a new file), the kernel release, the
   * uid, the cgroups and the options it was found with stay the same. The environment variable
   * `GHOST_SANDBOX_DETECTION_CACHE=off` turns it off for every backend.
   */
  readonly detectionCache?: 'auto' | 'off' | { readonly directory: string };
}

/** The cache directory `detect()` uses, or undefined when caching is off. */
function detectionCacheDirectory(choice: BwrapSandboxOptions['detectionCache']): string | undefined {
  if (choice === 'off' || process.env.GHOST_SANDBOX_DETECTION_CACHE === 'off') return undefined;
  if (choice === undefined || choice === 'auto') return defaultDetectionCacheDirectory();
  return choice.directory;
}

/** Checks the `detectionCache` option at creation, so a typo fails there and not at the first spawn. */
function checkDetectionCache(choice: unknown): void {
  if (choice === undefined || choice === 'auto' || choice === 'off') return;
  const directory = (choice as { directory?: unknown } | null)?.directory;
  if (typeof choice === 'object' && typeof directory === 'string' && isAbsolute(directory)) return;
  throw new ConfigurationError(
    `The bwrap option detectionCache must be 'auto', 'off' or { directory } with an absolute path, got ${JSON.stringify(choice)}.`,
  );
}

/**
 * Creates the bubblewrap backend. Every process it starts gets new pid, ipc, uts, cgroup, mount and
 * (unless `network: 'host'`) net namespaces, no capabilities and no new privileges, a seccomp
 * filter, a read-only root holding only the runtime paths and the command's shared libraries, the
 * workspace as the one writable place, a read-only `/proc/sys`, a cleared environment, rlimits for
 * CPU, file size, open files and core dumps, and a cgroup (or parent-side sampling) for memory and
 * processes. It never runs as real root: with a non-root parent it runs as the parent's uid in a
 * user namespace, with a root parent as an identity of its own from `unprivilegedIds`. Workspaces
 * must come from `createSandboxWorkspace()` (`@ghost/core/sandbox`); anything else is refused.
 * Whatever it creates (the cgroups, the launcher and so the sandbox) is in the hands of the kit's
 * reaper first, so a parent that dies at any moment leaves nothing running or behind.
 * `detect()` says precisely what is missing where it cannot, and which identity programs run as.
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
  checkDetectionCache(options.detectionCache);
  if ('unprivilegedIdentity' in options) {
    throw new ConfigurationError(
      'The bwrap option unprivilegedIdentity is gone: every program now runs as an identity of its own. Give a range with unprivilegedIds: { first, count } instead, or leave it out.',
      { option: 'unprivilegedIdentity' },
    );
  }
  const unprivilegedIds =
    options.unprivilegedIds === undefined ? undefined : checkUnprivilegedIds(options.unprivilegedIds);
  const detectOptions: BwrapSandboxOptions =
    unprivilegedIds === undefined ? options : { ...options, unprivilegedIds };
  // Once per backend, so once per process for the built-in one; from the disk cache when it holds.
  let detecting: Promise<CachedBwrapEnvironment> | undefined;
  const cached = () => {
    detecting ??= detectBwrapCached(
      detectOptions,
      startBwrapProcess,
      detectionCacheDirectory(options.detectionCache),
    );
    return detecting;
  };
  const environment = async () => (await cached()).environment;
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
      const { identity } = found;
      if (
        !detection.available ||
        found.tools === undefined ||
        found.architecture === undefined ||
        identity === undefined
      ) {
        throw new SandboxUnavailableError(
          `The bwrap sandbox cannot contain programs here: ${detection.reason}`,
          {
            backend: 'bwrap',
          },
        );
      }
      const plan = planSandboxSpawn(spec, { name: 'bwrap', capabilities: detection.capabilities });
      // Real paths to bind, and the links to recreate outside them: bubblewrap cannot bind onto a
      // link inside a directory it has already bound, and Node resolves a linked package's
      // dependencies from the link's own location.
      const paths = await planSandboxPaths(plan);
      if (identity.kind === 'dropped') {
        // Only a diagnosis: what bubblewrap binds is what planSandboxPaths resolved.
        requireUsable(plan.command, 'command', await requireExisting(plan.command, 'command'), 'execute');
        for (const [index, path] of plan.runtimePaths.entries()) {
          const field = `runtimePaths[${index}]`;
          requireUsable(path, field, await requireExisting(path, field), 'read');
        }
      }
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
            { cause: error, backend: 'bwrap' },
          );
        });
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
        if (SandboxUnavailableError.isInstance(error)) await (await cached()).forget();
        throw error;
      }
    },
  });
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

/** The bubblewrap backend with default options, as `sandbox: 'bwrap'` and, on Linux, `'native'` load it. */
export const bwrapSandbox: SandboxBackendV1 = createBwrapSandbox();
