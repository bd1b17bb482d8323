import type { SandboxProcessTree } from '@ghost/core/sandbox';
import { type ListedProcess, listProcesses, psPath } from './process-listing.js';

/**
 * A sandbox's processes on a system without pid namespaces or cgroups (macOS): the process group
 * the child leads, and every descendant of a member found by its parent pid, even one that left
 * the group (`setsid`, `setpgid`). {@link TrackedProcessTree.sample} lists the processes and
 * remembers each descendant outside the group for as long as it lives, so `kill()` and `close()`
 * reach it after its parent has exited.
 *
 * What it cannot hold: a descendant that leaves the group and whose parent exits before any
 * sample saw it is reparented to launchd (pid 1) and is out of reach. That is why the seatbelt
 * backend does not claim `processTreeOwnership`, and code mode denies subprocesses.
 */
export interface TrackedProcessTree extends SandboxProcessTree {
  /**
   * Lists the processes, updates the descendants it tracks, and resolves with the resident memory
   * of the whole tree, in bytes. Rejects when `ps` fails or `signal` aborts it.
   */
  sample(signal?: AbortSignal): Promise<number>;
}

/** The options of {@link trackedProcessTree}. */
export interface TrackedProcessTreeOptions {
  /** The `ps` binary that lists processes. Default `/bin/ps`. */
  readonly ps?: string;
}

/**
 * The tree of the child `root`, which leads its own process group (as `startSandboxChild` starts
 * it). Descendants outside the group are kept only while a listing shows them alive, so a pid the
 * system later reuses for an unrelated process is not signalled once it has left every listing.
 *
 * @param root The child's pid, which is also its process group id.
 */
export function trackedProcessTree(
  root: number,
  options: TrackedProcessTreeOptions = {},
): TrackedProcessTree {
  if (!Number.isSafeInteger(root) || root <= 1) {
    // kill(-1) and kill(-0) mean "every process" and "my own group": never the sandbox.
    throw new RangeError(`A sandbox's process group id must be an integer above 1, got ${root}.`);
  }
  const ps = options.ps ?? psPath;
  /** Live descendants seen outside the group, by pid. */
  let outsiders = new Set<number>();

  /** The tree's live members in `listing`; remembers the members outside the group. */
  const membersOf = (listing: readonly ListedProcess[]): ListedProcess[] => {
    const live = listing.filter((listed) => !listed.isZombie);
    const members = new Map<number, ListedProcess>();
    for (const listed of live) {
      if (listed.groupId === root || listed.pid === root || outsiders.has(listed.pid)) {
        members.set(listed.pid, listed);
      }
    }
    // Children of members, and their children, whatever group they moved to.
    let grew = true;
    while (grew) {
      grew = false;
      for (const listed of live) {
        if (!members.has(listed.pid) && members.has(listed.parentPid)) {
          members.set(listed.pid, listed);
          grew = true;
        }
      }
    }
    outsiders = new Set(
      [...members.values()].filter((each) => each.groupId !== root).map((each) => each.pid),
    );
    return [...members.values()];
  };

  const signalAll = (signal: NodeJS.Signals) => {
    signalQuietly(-root, signal);
    for (const pid of outsiders) signalQuietly(pid, signal);
  };

  return {
    signal(signal) {
      signalAll(signal);
    },
    async terminate() {
      let members: ListedProcess[];
      try {
        // List before killing: a descendant that left the group is found through its parent
        // while that parent still lives, and would be orphaned out of reach by the kill.
        members = membersOf(await listProcesses(ps));
      } catch {
        // Without a listing, kill(2) still says whether anything of ours exists.
        signalAll('SIGKILL');
        return !exists(-root) && [...outsiders].every((pid) => !exists(pid));
      }
      signalAll('SIGKILL');
      for (const member of members) signalQuietly(member.pid, 'SIGKILL');
      return members.length === 0;
    },
    async summarizeSurvivors() {
      const members = await listProcesses(ps).then(membersOf, () => undefined);
      if (members === undefined || members.length === 0) return `processes of group ${root}`;
      return `processes ${members.map((member) => member.pid).join(', ')} (group ${root} and its descendants)`;
    },
    async sample(signal) {
      const members = membersOf(await listProcesses(ps, signal));
      return members.reduce((sum, member) => sum + member.residentBytes, 0);
    },
  };
}

/** Sends a signal to a pid (or a group, negative); one already gone is not an error. */
function signalQuietly(target: number, signal: NodeJS.Signals): void {
  try {
    process.kill(target, signal);
  } catch {
    // ESRCH: already gone. EPERM: not ours any more; close() checks what is left either way.
  }
}

/** Whether kill(2) finds the pid or group (zombies included, which errs on the safe side). */
function exists(target: number): boolean {
  try {
    process.kill(target, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
