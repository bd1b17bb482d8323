import type { SandboxPathPlan, SandboxSpawnPlan } from '@ghost/core/sandbox';
import type { BwrapIdentity, ProgramIds } from './bwrap-identity.js';

/** What {@link bwrapArguments} needs besides the plan: paths found on the machine and fd numbers. */
export interface BwrapLayout {
  /** The plan's paths made real, and the links to recreate (`planSandboxPaths` in `@ghost/core/sandbox`). */
  readonly paths: SandboxPathPlan;
  /** Files the dynamic loader needs to start the command (interpreter and shared libraries). */
  readonly sharedLibraries: readonly string[];
  /** Who the program runs as: the parent's ids in a user namespace, or dropped from root. */
  readonly identity: BwrapIdentity;
  /**
   * With a root parent, the uid and gid `setpriv` drops to; left out, the command line carries
   * {@link unsetProgramId} there, which the launcher replaces once it knows its own pid (see
   * {@link programIdPositions}), and which `setpriv` refuses should it not.
   */
  readonly programIds?: ProgramIds;
  /** The fd bubblewrap reads the seccomp program from, when there is a filter. */
  readonly seccompFd?: number;
  /** An fd bubblewrap reads to its end (nothing) for the file that covers `/proc/cmdline`. */
  readonly emptyFileFd: number;
  /** The fd bubblewrap writes the sandbox's pids and namespaces to, as JSON. */
  readonly infoFd: number;
}

/** The host name inside every sandbox, instead of the machine's own. */
export const sandboxHostname = 'sandbox';

/**
 * Capabilities bubblewrap keeps for the command when the parent is root, for `setpriv` alone: it
 * changes uid and gid, empties the bounding set, and bubblewrap's `--chdir` into the workspace,
 * which belongs to the identity and is closed to others, needs to search it. `setpriv` clears
 * them all before the program starts.
 */
const dropCapabilities = ['CAP_SETUID', 'CAP_SETGID', 'CAP_SETPCAP', 'CAP_DAC_READ_SEARCH'];

/**
 * The bubblewrap command line for one sandboxed process: new pid, ipc, uts, cgroup, mount and
 * (unless `network: 'shared'`) net namespaces, no capabilities, a read-only tmpfs root holding only
 * the runtime paths and the command's libraries (bound read-only at their real paths, with the
 * links that lead to them outside every bound path recreated), the workspace writable, a fresh `/proc` with `/proc/sys` read-only and the kernel command line and
 * pid 1 covered, a read-only minimal `/dev`, a neutral host name, the environment cleared and set
 * to exactly `plan.env`, and the network only when asked for.
 *
 * Who the program runs as follows `layout.identity`: with a non-root parent, a user namespace maps
 * the parent's ids and nested ones are disabled; with a root parent there is no user namespace,
 * and the command becomes `setpriv`, which drops to the unprivileged identity before executing
 * the program.
 *
 * @example
 * ```ts
 * spawn('bwrap', bwrapArguments(plan, { paths, sharedLibraries, identity, seccompFd: 4, emptyFileFd: 5, infoFd: 6 }), { stdio });
 * ```
 */
export function bwrapArguments(plan: SandboxSpawnPlan, layout: BwrapLayout): string[] {
  const { identity } = layout;
  const args = [
    ...(identity.kind === 'parent' ? ['--unshare-user'] : []),
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup',
    ...(plan.network === 'shared' ? [] : ['--unshare-net']),
    // No user namespaces inside: the seccomp filter denies unshare too, this is the second lock.
    // bubblewrap offers it only inside a user namespace of its own; with a root parent the filter
    // is the one lock (docs/decisions/2026-12-04-root-parent-identity.md).
    ...(identity.kind === 'parent' ? ['--disable-userns'] : []),
    '--die-with-parent',
    // A new session, so TIOCSTI cannot push keystrokes into the parent's terminal (CVE-2017-5226).
    '--new-session',
    '--cap-drop',
    'ALL',
    ...(identity.kind === 'dropped' ? dropCapabilities.flatMap((name) => ['--cap-add', name]) : []),
    '--hostname',
    sandboxHostname,
    '--clearenv',
    ...Object.entries(plan.env).flatMap(([name, value]) => ['--setenv', name, value]),
    '--tmpfs',
    '/',
    ...mounts(plan, layout),
    '--proc',
    '/proc',
    ...procCovers(layout.emptyFileFd),
    '--dev',
    '/dev',
    // After the mounts: the root and /dev (with /dev/shm) become read-only, the workspace stays writable.
    '--remount-ro',
    '/',
    '--remount-ro',
    '/dev',
    '--chdir',
    layout.paths.cwd,
    '--info-fd',
    String(layout.infoFd),
    ...(layout.seccompFd === undefined ? [] : ['--seccomp', String(layout.seccompFd)]),
    '--',
    ...(identity.kind === 'dropped' ? dropCommand(identity, layout.programIds) : []),
    plan.command,
    ...plan.args,
  ];
  return args;
}

/**
 * What is laid over the fresh `/proc`:
 *
 * - `/proc/sys` read-only, whatever bubblewrap decides. bubblewrap covers it only where
 *   `access(W_OK)` on the directory succeeds, and for a sandbox whose uid is real root it fails
 *   (the directory is 0555 and no capability overrides that), so ~200 kernel settings stayed
 *   writable. The source is the machine's `/proc/sys`: every setting there reads the namespaces of
 *   the process asking, so it shows the same values as the sandbox's own.
 * - `/proc/cmdline`, the kernel command line (boot options, sometimes tokens), by an empty file.
 * - `/proc/1`, bubblewrap's init, by an empty read-only directory. With a non-root parent it runs
 *   with the program's own uid, so its memory and environment would be open to the program. The
 *   cover is made while bubblewrap itself is pid 1 and stays on that pid while it lives.
 */
function procCovers(emptyFileFd: number): string[] {
  return [
    '--ro-bind',
    '/proc/sys',
    '/proc/sys',
    '--perms',
    '0444',
    '--ro-bind-data',
    String(emptyFileFd),
    '/proc/cmdline',
    '--tmpfs',
    '/proc/1',
    '--remount-ro',
    '/proc/1',
  ];
}

/** What stands for the program's uid and gid until the launcher knows them: not a number, so setpriv refuses it. */
export const unsetProgramId = 'unset';

/**
 * `setpriv` in front of the program, with a root parent: real, effective and saved ids set to the
 * program's own, no supplementary groups, and the inheritable and bounding sets emptied (the
 * effective, permitted and ambient sets empty themselves when every uid leaves 0). It exits with
 * an error instead of starting the program if any step fails, an unset id included.
 */
function dropCommand(
  identity: Extract<BwrapIdentity, { kind: 'dropped' }>,
  ids: ProgramIds | undefined,
): string[] {
  return [
    identity.setpriv,
    `--reuid=${ids?.uid ?? unsetProgramId}`,
    `--regid=${ids?.gid ?? unsetProgramId}`,
    '--clear-groups',
    '--inh-caps=-all',
    '--bounding-set=-all',
    '--',
  ];
}

/**
 * Where in `args` (from {@link bwrapArguments}, without `programIds`) the launcher writes the
 * program's `--reuid=` and `--regid=`: counted from the end, past the program's own arguments, so
 * no argument or environment value that happens to read the same is ever taken for them.
 * Undefined when there is no `setpriv` (a non-root parent).
 */
export function programIdPositions(
  args: readonly string[],
  plan: SandboxSpawnPlan,
): { readonly uid: number; readonly gid: number } | undefined {
  // setpriv, --reuid, --regid, three options, --, then the command and its arguments.
  const uid = args.length - plan.args.length - 1 - 6;
  if (args[uid] !== `--reuid=${unsetProgramId}` || args[uid + 1] !== `--regid=${unsetProgramId}`)
    return undefined;
  return { uid, gid: uid + 1 };
}

/**
 * The directories leading to the binds and links, then read-only binds for the runtime, then the
 * writable workspace, then the links. Parents are bound before the paths inside them, so a runtime
 * path nested in another (or the workspace inside a runtime path) stays what it was asked to be.
 * Links come last: each lies outside every bound path (`planSandboxPaths` lists no other), in
 * the tmpfs root, where it points at a real path bound above or at nothing.
 */
function mounts(plan: SandboxSpawnPlan, layout: BwrapLayout): string[] {
  const { paths } = layout;
  const dropTools =
    layout.identity.kind === 'dropped' ? [layout.identity.setpriv, ...layout.identity.setprivLibraries] : [];
  const readOnly = [...new Set([plan.command, ...layout.sharedLibraries, ...dropTools, ...paths.readPaths])];
  const binds = [
    ...readOnly.map((path) => ({ path, flag: '--ro-bind' })),
    { path: paths.workspace, flag: '--bind' },
  ].sort((a, b) => depth(a.path) - depth(b.path));
  // The command and its libraries are bound at the paths given; a link there is not made again.
  const links = paths.links.filter((link) => !readOnly.includes(link.path));
  return [
    ...leadingDirectories([...binds.map(({ path }) => path), ...links.map(({ path }) => path)]).flatMap(
      (path) => ['--perms', '0755', '--dir', path],
    ),
    ...binds.flatMap(({ path, flag }) => [flag, path, path]),
    ...links.flatMap(({ path, target }) => ['--symlink', target, path]),
  ];
}

/**
 * The directories bubblewrap would create in the tmpfs root on the way to `destinations`, parents
 * first, to be made ahead with mode 0755: bubblewrap makes them itself (for a bind, and for a
 * link's parents) with a mode that depends on its version (0700 for 0.8 here), which the unprivileged identity of a root parent could not
 * search. Directories that are destinations, or inside one, are the machine's and left alone.
 */
function leadingDirectories(destinations: readonly string[]): string[] {
  const isBound = (path: string) =>
    destinations.some((destination) => path === destination || path.startsWith(`${destination}/`));
  const found = new Set<string>();
  for (const destination of destinations) {
    const parts = destination.split('/').filter(Boolean);
    for (let length = 1; length < parts.length; length += 1) {
      const directory = `/${parts.slice(0, length).join('/')}`;
      if (!isBound(directory)) found.add(directory);
    }
  }
  return [...found].sort((a, b) => depth(a) - depth(b));
}

function depth(path: string): number {
  return path.split('/').filter(Boolean).length;
}
