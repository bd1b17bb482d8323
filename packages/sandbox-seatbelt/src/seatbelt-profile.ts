import {
  ConfigurationError,
  noSandboxCapabilities,
  planSandboxSpawn,
  type SandboxPlanTarget,
  type SandboxSpawnPlan,
  type SandboxSpawnSpec,
} from '@ghost/core/sandbox';
import { defaultRealpath } from './mac-path-resolver.js';
import { type SeatbeltPolicy, seatbeltPolicy } from './seatbelt-policy.js';

/** Options of {@link seatbeltProfile} and {@link seatbeltArguments}. */
export interface SeatbeltProfileOptions {
  /**
   * Resolves an absolute path to the one the file system knows it by, following every symbolic
   * link, and throws an error with `code: 'ENOENT'` (or `'ENOTDIR'`) for a path that does not
   * exist. Default: `fs.realpathSync.native` on macOS. On another platform the default resolves
   * nothing, since this machine's links say nothing about a Mac's: paths are taken as written,
   * with macOS's own `/tmp`, `/var` and `/etc` links applied.
   */
  readonly realpath?: (path: string) => string;
  /**
   * Shared libraries the command loads from outside the system locations, such as the ICU and
   * OpenSSL of a Homebrew `node`: absolute paths, read and mapped executable. Default: none (the
   * node binary from nodejs.org needs none).
   */
  readonly sharedLibraries?: readonly string[];
}

/**
 * What a profile can say about a spec: files, subprocesses and the network. Limits are the
 * launcher's to apply or refuse, never the profile's, so they are left out of the plan here.
 */
const profileTarget: SandboxPlanTarget = {
  name: 'seatbelt',
  capabilities: {
    ...noSandboxCapabilities,
    networkIsolation: true,
    subprocessDenial: true,
    filesystemIsolation: true,
  },
};

/**
 * The seatbelt (macOS sandbox) profile a process started from `spec` runs under, as SBPL text:
 * deny by default; read the command, the runtime paths and the system locations Node needs to
 * start; write the workspace only; execute the command only (no fork with
 * `subprocesses: 'deny'`); no network unless `network: 'shared'`. Every allowance carries a comment
 * that says why. It is pure: it reads no file unless the default `realpath` does (on macOS), so it
 * runs anywhere, and the same spec always gives the same text.
 *
 * A path that is not plain printable ASCII, or is very long, is not written into the profile: it
 * appears as `(param "PATH_0")`, its value listed in the header comment and passed to
 * `sandbox-exec` as `-DPATH_0=<path>` ({@link seatbeltArguments}).
 *
 * The spec's limits do not shape the profile and are not checked here.
 *
 * @throws ConfigurationError for a malformed spec (as `planSandboxSpawn` in `@ghost/core/sandbox`
 *   rejects it), a path that is relative, not valid Unicode, longer than macOS accepts or that
 *   cannot be resolved, or a workspace that is `/`.
 *
 * @example
 * ```ts
 * import { seatbeltProfile } from '@ghost/sandbox-seatbelt';
 *
 * console.log(
 *   seatbeltProfile({
 *     command: '/usr/local/bin/node',
 *     args: ['host.js'],
 *     env: {},
 *     runtimePaths: ['/opt/my-agent/host'],
 *     workspace: '/tmp/ghost-program-1',
 *     subprocesses: 'deny',
 *   }),
 * ); // (version 1) (deny default) ... (subpath "/private/tmp/ghost-program-1") ...
 * ```
 */
export function seatbeltProfile(spec: SandboxSpawnSpec, options: SeatbeltProfileOptions = {}): string {
  return policyOf(spec, options).policy.profile;
}

/** Checks and plans `spec` for the profile, then generates its policy. */
export function policyOf(
  spec: SandboxSpawnSpec,
  options: SeatbeltProfileOptions,
): { readonly plan: SandboxSpawnPlan; readonly policy: SeatbeltPolicy } {
  const plan = planForProfile(spec);
  const policy = seatbeltPolicy(plan, {
    realpath: options.realpath ?? defaultRealpath,
    sharedLibraries: sharedLibrariesOf(options),
  });
  return { plan, policy };
}

function planForProfile(spec: SandboxSpawnSpec): SandboxSpawnPlan {
  if (typeof spec !== 'object' || spec === null) return planSandboxSpawn(spec, profileTarget);
  const { limits: _appliedByTheLauncher, ...rest } = spec;
  return planSandboxSpawn(rest, profileTarget);
}

function sharedLibrariesOf(options: SeatbeltProfileOptions): readonly string[] {
  const libraries: unknown = options.sharedLibraries ?? [];
  if (!Array.isArray(libraries) || !libraries.every((path) => typeof path === 'string')) {
    throw new ConfigurationError('The sharedLibraries option must be an array of absolute paths.');
  }
  return libraries;
}
