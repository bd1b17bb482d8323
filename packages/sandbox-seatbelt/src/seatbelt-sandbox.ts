import { access, constants } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import {
  ConfigurationError,
  checkSpawnDirectories,
  defineSandboxBackend,
  planSandboxSpawn,
  type SandboxBackendV1,
  type SandboxCapabilities,
  type SandboxDetection,
  type SandboxProcess,
  type SandboxSpawnSpec,
  SandboxUnavailableError,
  startSandboxChild,
  superviseSandboxProcess,
} from '@ghost/core/sandbox';
import { psPath } from './process-listing.js';
import { sandboxExecPath, seatbeltArguments } from './seatbelt-arguments.js';
import { detectSeatbelt, seatbeltCapabilities } from './seatbelt-detect.js';
import { seatbeltLaunch } from './seatbelt-launcher.js';
import type { SeatbeltProfileOptions } from './seatbelt-profile.js';
import { trackedProcessTree } from './tracked-process-tree.js';
import { watchTree } from './tree-watch.js';

/** The options of {@link createSeatbeltSandbox}: those of the profile, and one test seam. */
export interface SeatbeltSandboxOptions extends SeatbeltProfileOptions {
  /**
   * The `sandbox-exec` to run, by absolute path. Default `/usr/bin/sandbox-exec`; leave it there
   * in applications. **A test seam:** given on another platform than macOS, `spawn()` runs it
   * without `detect()` (which still says seatbelt needs macOS), so the backend's process
   * management (the launcher, rlimits, the memory watch, the process tree, `close()`) can be
   * tested on Linux with a stand-in that checks its arguments and runs the command. A stand-in
   * enforces no profile.
   */
  readonly sandboxExecPath?: string;
}

/**
 * Creates the seatbelt backend, macOS's own sandbox: each program runs under
 * `/usr/bin/sandbox-exec -p <profile>`, the deny-by-default profile `seatbeltProfile(spec)`
 * generates (its files, its workspace, no network unless asked, no subprocesses unless allowed),
 * with `RLIMIT_CPU`, `RLIMIT_FSIZE`, `RLIMIT_NOFILE` and `RLIMIT_CORE=0` set before it starts,
 * exactly the spec's environment, and memory bounded by sampling the tree's resident size (macOS
 * has no cgroups). The program leads its own process group, and descendants that leave the group
 * are tracked by their parent; `kill()` and `close()` reach both. It does not claim
 * `processTreeOwnership`: a descendant that leaves the group and is orphaned between two samples
 * escapes, which is why code mode denies subprocesses.
 *
 * `detect()` needs macOS and `sandbox-exec`, and proves the profile holds with a probe (a read
 * outside the probe's workspace is denied); it says precisely what is missing otherwise.
 *
 * @throws ConfigurationError when an option is malformed.
 *
 * @example
 * ```ts
 * import { createRuntime } from '@ghost/core';
 * import { createSeatbeltSandbox } from '@ghost/sandbox-seatbelt';
 *
 * // A Node from Homebrew loads ICU from its own prefix; name it so the profile lets it load.
 * const runtime = createRuntime({
 *   sandboxes: [createSeatbeltSandbox({ sharedLibraries: ['/opt/homebrew/opt/icu4c/lib/libicuuc.77.dylib'] })],
 * });
 * ```
 */
export function createSeatbeltSandbox(options: SeatbeltSandboxOptions = {}): SandboxBackendV1 {
  const sandboxExec = checkSandboxExecPath(options.sandboxExecPath);
  const profileOptions: SeatbeltProfileOptions = {
    ...(options.realpath === undefined ? {} : { realpath: options.realpath }),
    ...(options.sharedLibraries === undefined ? {} : { sharedLibraries: options.sharedLibraries }),
  };
  const platform = process.platform;
  const uid = process.getuid?.();
  // Once per backend, so the probe runs once per process for the built-in one.
  let detecting: Promise<SandboxDetection> | undefined;
  const detection = () => {
    detecting ??= detectSeatbelt({ sandboxExec, platform, uid, ps: psPath });
    return detecting;
  };

  /** What spawn may promise: what detect() found on macOS; the seam's stand-in elsewhere. */
  const spawnCapabilities = async (): Promise<SandboxCapabilities> => {
    if (platform !== 'darwin' && options.sandboxExecPath !== undefined)
      return seatbeltCapabilities(uid, true);
    const found = await detection();
    if (!found.available) {
      throw new SandboxUnavailableError(`The seatbelt sandbox cannot run here: ${found.reason}`, {
        backend: 'seatbelt',
        platform,
      });
    }
    return found.capabilities;
  };

  return defineSandboxBackend({
    kind: 'sandbox',
    specificationVersion: 'sandbox-v1',
    name: 'seatbelt',
    platforms: ['darwin'],
    detect: detection,
    async spawn(spec: SandboxSpawnSpec): Promise<SandboxProcess> {
      const capabilities = await spawnCapabilities();
      const plan = planSandboxSpawn(spec, { name: 'seatbelt', capabilities });
      await checkSpawnDirectories(plan);
      const args = seatbeltArguments(spec, profileOptions);
      // sandbox-exec would start and then fail to exec a missing command; refuse it before anything runs.
      await mustBeExecutable(plan.command, 'the command');
      await mustBeExecutable(sandboxExec, 'sandbox-exec');
      plan.signal?.throwIfAborted();
      const launch = seatbeltLaunch(plan.limits, plan.env, sandboxExec, args);
      const child = await startSandboxChild(plan, {
        backend: 'seatbelt',
        command: launch.command,
        args: launch.args,
        // The launcher needs no environment; `env -i` gives the program exactly the plan's.
        env: {},
      });
      const tree = trackedProcessTree(child.pid!);
      const memoryBytes = plan.limits.memoryBytes;
      return superviseSandboxProcess({
        backend: 'seatbelt',
        plan,
        child,
        tree,
        // Always watched, with or without a memory limit: sampling is also how descendants that
        // leave the process group are found.
        watchLimits: (exceeded) =>
          watchTree(tree, {
            ...(memoryBytes === undefined ? {} : { memoryBytes }),
            exceeded: () => exceeded('memoryBytes'),
          }),
      });
    },
  });
}

function checkSandboxExecPath(path: unknown): string {
  if (path === undefined) return sandboxExecPath;
  if (typeof path !== 'string' || !isAbsolute(path)) {
    throw new ConfigurationError(
      `The seatbelt option sandboxExecPath must be an absolute path, got ${JSON.stringify(path)}. Leave it unset to use ${sandboxExecPath}.`,
    );
  }
  return path;
}

async function mustBeExecutable(path: string, what: string): Promise<void> {
  await access(path, constants.X_OK).catch((error: unknown) => {
    throw new SandboxUnavailableError(
      `The seatbelt backend cannot run ${what} ${path}: ${(error as Error).message}. Check that it exists and is executable.`,
      { cause: error, backend: 'seatbelt', command: path },
    );
  });
}

/**
 * The seatbelt backend with default options, as `sandbox: 'seatbelt'` and, on macOS,
 * `sandbox: 'native'` load it.
 */
export const seatbeltSandbox: SandboxBackendV1 = createSeatbeltSandbox();
