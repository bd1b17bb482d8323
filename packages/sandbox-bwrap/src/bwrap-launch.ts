import type { SandboxLimits } from '@ghost/core/sandbox';

/**
 * The host programs a launch goes through, found by {@link findHostTools}: bash closes stray
 * descriptors and joins the cgroups, prlimit sets the rlimits, bwrap builds the sandbox. Each
 * `exec`s the next, so all three are one process, the pid Node spawned.
 */
export interface HostTools {
  readonly bwrap: string;
  readonly bash: string;
  readonly prlimit: string;
}

/**
 * Runs as `bash -c launcherScript ghost-launch <keep> <cgroup join files…> -- <command…>`. Node's spawn
 * passes on every descriptor the parent inherited without close-on-exec (a harness's pipe, a
 * directory fd that would defeat the mount namespace), and bubblewrap passes on what it is given,
 * so the launcher closes every fd from `<keep>` up before anything else runs. Then it joins each
 * cgroup by writing `0` (the writing task itself) to the cgroup's join file (see
 * `SandboxCgroup.joinFiles`), so bubblewrap and everything below it start inside the limits, with
 * no window in which a process runs outside them. Finally it starts prlimit (and so bubblewrap)
 * with an empty environment, so nothing of the parent's reaches even bubblewrap's own processes.
 */
const launcherScript = [
  'keep=$1; shift',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a bash parameter expansion, not a template.
  'for f in /proc/$$/fd/*; do fd=${f##*/}; if [ "$fd" -ge "$keep" ]; then eval "exec $fd>&-"; fi; done',
  'while [ "$1" != "--" ]; do',
  '  echo 0 2>/dev/null > "$1" || { echo "ghost-launch: cannot join the cgroup $1" >&2; exit 125; }',
  '  shift',
  'done',
  'shift',
  // An empty environment from here on: bash exports PWD (the parent's working directory), SHLVL
  // and _, and bubblewrap's init shows its environment in /proc/1/environ.
  'exec -c "$@"',
].join('\n');

/** Exit code of the launcher when it could not join a cgroup. */
export const launcherFailureCode = 125;

/** What {@link launchCommand} puts in front of bubblewrap's own arguments. */
export interface LaunchOptions {
  readonly tools: HostTools;
  /** The lowest descriptor the launcher closes: everything below it is a pipe Node set up on purpose. */
  readonly keepBelow: number;
  readonly cgroupJoinFiles: readonly string[];
  readonly limits: SandboxLimits;
}

/**
 * The command line that starts bubblewrap through the launcher and prlimit. The rlimits apply to
 * the sandboxed command and are inherited by its children: `RLIMIT_CPU` (soft at the limit, so the
 * process gets SIGXCPU and `exited` can name the limit; hard a second later), `RLIMIT_FSIZE`,
 * `RLIMIT_NOFILE`, and always `RLIMIT_CORE` 0 so a crash leaves no core file.
 */
export function launchCommand(options: LaunchOptions, bwrapArguments: readonly string[]): [string, string[]] {
  const { limits } = options;
  const rlimits = [
    ...(limits.cpuSeconds === undefined
      ? []
      : [`--cpu=${Math.ceil(limits.cpuSeconds)}:${Math.ceil(limits.cpuSeconds) + 1}`]),
    ...(limits.fileBytes === undefined ? [] : [`--fsize=${Math.floor(limits.fileBytes)}`]),
    ...(limits.openFiles === undefined ? [] : [`--nofile=${Math.floor(limits.openFiles)}`]),
    '--core=0',
  ];
  return [
    options.tools.bash,
    [
      '-c',
      launcherScript,
      'ghost-launch',
      String(options.keepBelow),
      ...options.cgroupJoinFiles,
      '--',
      options.tools.prlimit,
      ...rlimits,
      '--',
      options.tools.bwrap,
      ...bwrapArguments,
    ],
  ];
}
