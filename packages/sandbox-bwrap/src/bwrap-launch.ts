import type { SandboxLimits } from '@ghost/core/sandbox';
import { unsetProgramId } from './bwrap-arguments.js';

/** Exit code of the launcher when it could not join a cgroup or had no id for the program. */
export const launcherFailureCode = 125;

/** Exit code of the launcher when the parent closed the go pipe without sending the line (it died). */
export const parentGoneCode = 124;

/**
 * The machine's programs a launch goes through, found by {@link findMachineTools}: bash closes stray
 * descriptors and joins the cgroups, prlimit sets the rlimits, bwrap builds the sandbox. Each
 * `exec`s the next, so all three are one process, the pid Node spawned.
 */
export interface MachineTools {
  readonly bwrap: string;
  readonly bash: string;
  readonly prlimit: string;
}

/**
 * Runs as `bash -c launcherScript ghost-launch <keep> <go> <uid at> <gid at> <cgroup join files…> --
 * <command…>`.
 *
 * First it waits for one line on fd `<go>`, a pipe whose other end only the parent holds: the
 * parent sends it once it has handed this launcher to its reaper (`reapOnParentDeath`), so from
 * the moment the launcher does anything, the parent's death is followed by its end. A parent that
 * died before sending it closed the pipe, and the launcher exits without starting anything. The
 * line is the program's id with a root parent, which bash writes into the command at `<uid at>`
 * and `<gid at>` (`-1` for a non-root parent, whose programs keep its ids): the id is the root
 * parent's range start plus this launcher's pid, which only the running launcher has.
 *
 * Node's spawn passes on every descriptor the parent inherited without close-on-exec (a
 * harness's pipe, a directory fd that would defeat the mount namespace), and bubblewrap passes on
 * what it is given, so the launcher then closes every fd from `<keep>` up (`<go>` among them).
 * Then it joins each cgroup by writing `0` (the writing task itself) to the cgroup's join file
 * (see `SandboxCgroup.joinFiles`), so bubblewrap and everything below it start inside the limits,
 * with no window in which a process runs outside them. Finally it starts prlimit (and so
 * bubblewrap) with an empty environment, so nothing of the parent's reaches even bubblewrap's own
 * processes.
 */
const launcherScript = [
  'keep=$1; go=$2; uid_at=$3; gid_at=$4; shift 4',
  `IFS= read -r -u "$go" id || exit ${parentGoneCode}`,
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a bash parameter expansion, not a template.
  'for f in /proc/$$/fd/*; do fd=${f##*/}; if [ "$fd" -ge "$keep" ]; then eval "exec $fd>&-"; fi; done',
  'while [ "$1" != "--" ]; do',
  `  echo 0 2>/dev/null > "$1" || { echo "ghost-launch: cannot join the cgroup $1" >&2; exit ${launcherFailureCode}; }`,
  '  shift',
  'done',
  'shift',
  'if [ "$uid_at" -ge 0 ]; then',
  `  case $id in ''|*[!0-9]*) echo "ghost-launch: no program id" >&2; exit ${launcherFailureCode} ;; esac`,
  '  command=("$@")',
  `  [ "\${command[$uid_at]}" = "--reuid=${unsetProgramId}" ] && [ "\${command[$gid_at]}" = "--regid=${unsetProgramId}" ] || { echo "ghost-launch: no place for the program id" >&2; exit ${launcherFailureCode}; }`,
  '  command[$uid_at]="--reuid=$id"; command[$gid_at]="--regid=$id"',
  // An empty environment from here on: bash exports PWD (the parent's working directory), SHLVL
  // and _, and bubblewrap's init shows its environment in /proc/1/environ.
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a bash array expansion, not a template.
  '  exec -c "${command[@]}"',
  'fi',
  'exec -c "$@"',
].join('\n');

/** What {@link launchCommand} puts in front of bubblewrap's own arguments. */
export interface LaunchOptions {
  readonly tools: MachineTools;
  /** The lowest descriptor the launcher closes: everything below it is a pipe Node set up on purpose. */
  readonly keepBelow: number;
  /** The descriptor the launcher reads its go line from (at or above `keepBelow`, so closed after). */
  readonly goFd: number;
  /**
   * Where in bubblewrap's arguments the program's `--reuid=` and `--regid=` go
   * (`programIdPositions`), with a root parent; the launcher writes the id it is sent there.
   */
  readonly programIdPositions?: { readonly uid: number; readonly gid: number };
  readonly cgroupJoinFiles: readonly string[];
  readonly limits: SandboxLimits;
}

/**
 * The command line that starts bubblewrap through the launcher (which first waits for its go line)
 * and prlimit. The rlimits apply to
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
  // Positions in the command after the join files: prlimit, its options, --, bwrap, then its arguments.
  const bwrapStart = 1 + rlimits.length + 2;
  const positions = options.programIdPositions;
  return [
    options.tools.bash,
    [
      '-c',
      launcherScript,
      'ghost-launch',
      String(options.keepBelow),
      String(options.goFd),
      String(positions === undefined ? -1 : bwrapStart + positions.uid),
      String(positions === undefined ? -1 : bwrapStart + positions.gid),
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
