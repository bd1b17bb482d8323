import { isAbsolute } from 'node:path';
import {
  ConfigurationError,
  defineSandboxBackend,
  type SandboxBackendV1,
  type SandboxDetection,
  type SandboxProcess,
  type SandboxSpawnSpec,
} from '@ghost/core/sandbox';
import { checkUnprivilegedIds, type UnprivilegedIds } from './bwrap-identity.js';
import { startBwrapProcess } from './bwrap-process.js';
import { spawnInBwrap } from './bwrap-spawn.js';
import { type CachedBwrapEnvironment, detectBwrapCached } from './cached-bwrap-detection.js';
import { defaultDetectionCacheDirectory } from './detection-cache.js';

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
 * (unless `network: 'shared'`) net namespaces, no capabilities and no new privileges, a seccomp
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
  const detectOptions = checkBwrapSandboxOptions(options);
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
      return spawnInBwrap(await environment(), spec, async () => {
        await (await cached()).forget();
      });
    },
  });
}

/**
 * Checks the options when the backend is created, so a mistake fails there and not at the first
 * spawn; returns the options detection runs with.
 */
function checkBwrapSandboxOptions(options: BwrapSandboxOptions): BwrapSandboxOptions {
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
  return unprivilegedIds === undefined ? options : { ...options, unprivilegedIds };
}

/** The bubblewrap backend with default options, as `sandbox: 'bwrap'` and, on Linux, `'native'` load it. */
export const bwrapSandbox: SandboxBackendV1 = createBwrapSandbox();
