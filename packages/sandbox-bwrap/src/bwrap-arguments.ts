import type { SandboxSpawnPlan } from '@ghost/core';

/** What {@link bwrapArguments} needs besides the plan: paths found on the host and fd numbers. */
export interface BwrapLayout {
  /** Files the dynamic loader needs to start the command (interpreter and shared libraries). */
  readonly sharedLibraries: readonly string[];
  /** The fd bubblewrap reads the seccomp program from, when there is a filter. */
  readonly seccompFd?: number;
  /** The fd bubblewrap writes the sandbox's pids and namespaces to, as JSON. */
  readonly infoFd: number;
}

/**
 * The bubblewrap command line for one sandboxed process: every namespace new, no capabilities, a
 * read-only tmpfs root holding only the runtime paths and the command's libraries (bound read-only
 * at their own paths), the workspace writable, a fresh `/proc` and a read-only minimal `/dev`, the
 * environment cleared and set to exactly `plan.env`, and the network only when asked for.
 *
 * @example
 * ```ts
 * spawn('bwrap', bwrapArguments(plan, { sharedLibraries, seccompFd: 4, infoFd: 5 }), { stdio });
 * ```
 */
export function bwrapArguments(plan: SandboxSpawnPlan, layout: BwrapLayout): string[] {
  const args = [
    '--unshare-user',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup',
    ...(plan.network === 'host' ? [] : ['--unshare-net']),
    // No user namespaces inside: the seccomp filter denies unshare too, this is the second lock.
    '--disable-userns',
    '--die-with-parent',
    // A new session, so TIOCSTI cannot push keystrokes into the parent's terminal (CVE-2017-5226).
    '--new-session',
    '--cap-drop',
    'ALL',
    '--clearenv',
    ...Object.entries(plan.env).flatMap(([name, value]) => ['--setenv', name, value]),
    '--tmpfs',
    '/',
    ...mounts(plan, layout),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    // After the mounts: the root and /dev (with /dev/shm) become read-only, the workspace stays writable.
    '--remount-ro',
    '/',
    '--remount-ro',
    '/dev',
    '--chdir',
    plan.cwd,
    '--info-fd',
    String(layout.infoFd),
    ...(layout.seccompFd === undefined ? [] : ['--seccomp', String(layout.seccompFd)]),
    '--',
    plan.command,
    ...plan.args,
  ];
  return args;
}

/**
 * Read-only binds for the runtime, then the writable workspace. Parents are bound before the paths
 * inside them, so a runtime path nested in another (or the workspace inside a runtime path) stays
 * what it was asked to be.
 */
function mounts(plan: SandboxSpawnPlan, layout: BwrapLayout): string[] {
  const readOnly = [...new Set([plan.command, ...layout.sharedLibraries, ...plan.runtimePaths])];
  const binds = [
    ...readOnly.map((path) => ({ path, flag: '--ro-bind' })),
    { path: plan.workspace, flag: '--bind' },
  ].sort((a, b) => depth(a.path) - depth(b.path));
  return binds.flatMap(({ path, flag }) => [flag, path, path]);
}

function depth(path: string): number {
  return path.split('/').filter(Boolean).length;
}
