import { nodeFsPromises } from '../lazy-builtins.js';
import type { SandboxProcessTree } from './sandbox-process-tree.js';

/**
 * The {@link SandboxProcessTree} of a child started in its own process group (Node's
 * `detached: true`, which {@link startSandboxChild} uses): signals go to the whole group, and it has
 * ended once no live process is left in it. A process that leaves the group (`setsid`, a new
 * group) escapes it; a backend whose capabilities claim `processTreeOwnership` needs a stronger
 * hold, such as a pid namespace or a cgroup.
 *
 * @param groupId The process group id, the pid of the child that leads it.
 *
 * @example
 * ```ts
 * const child = await startSandboxChild(plan, { backend: 'nice', command: '/usr/bin/nice', args: [plan.command, ...plan.args] });
 * return superviseSandboxProcess({ backend: 'nice', plan, child, tree: processGroupTree(child.pid!) });
 * ```
 */
export function processGroupTree(groupId: number): SandboxProcessTree {
  if (!Number.isSafeInteger(groupId) || groupId <= 1) {
    // kill(-1) and kill(-0) mean "every process" and "my own group": never what a caller wants.
    throw new RangeError(`A process group id must be an integer above 1, got ${groupId}.`);
  }
  return {
    signal(signal) {
      signalGroup(groupId, signal);
    },
    async terminate() {
      try {
        signalGroup(groupId, 'SIGKILL');
      } catch {
        // A member we may not signal: the check below still tells whether the group is gone.
      }
      return (await liveGroupMembers(groupId)).length === 0;
    },
    async summarizeSurvivors() {
      const members = await liveGroupMembers(groupId);
      return members.length > 0 && members[0] !== unknownMember
        ? `processes ${members.join(', ')} of group ${groupId}`
        : `processes of group ${groupId}`;
    },
  };
}

/** Stands for a live member that exists but cannot be named (no /proc on this platform). */
const unknownMember = -1;

/** Sends a signal to a whole process group; a group that no longer exists is not an error. */
function signalGroup(groupId: number, signal: NodeJS.Signals | 0): void {
  try {
    process.kill(-groupId, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/**
 * The live processes of the group. A killed child of a child is a zombie until its new parent
 * (often PID 1) reaps it, and kill(2) still finds zombies; they run nothing, so on Linux /proc
 * tells them apart. Elsewhere, or when /proc cannot be read, a group kill(2) still finds counts as
 * one unnamed live member, to err on the safe side.
 */
async function liveGroupMembers(groupId: number): Promise<number[]> {
  try {
    process.kill(-groupId, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return [];
  }
  if (process.platform !== 'linux') return [unknownMember];
  let entries: string[];
  try {
    entries = await nodeFsPromises().readdir('/proc');
  } catch {
    return [unknownMember];
  }
  const members = await Promise.all(
    entries
      .filter((entry) => /^\d+$/.test(entry))
      .map(async (entry) => {
        const stat = await nodeFsPromises()
          .readFile(`/proc/${entry}/stat`, 'utf8')
          .catch(() => undefined);
        const state = stat === undefined ? undefined : parseProcessStat(stat);
        if (state === undefined || state.groupId !== groupId) return undefined;
        return ['Z', 'X', 'x'].includes(state.state) ? undefined : Number(entry);
      }),
  );
  return members.filter((pid): pid is number => pid !== undefined);
}

/** Reads the state and process group from a Linux /proc/<pid>/stat line. */
function parseProcessStat(stat: string): { state: string; groupId: number } | undefined {
  // The command name in parentheses may itself contain spaces and parentheses: split after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [state, , groupId] = fields;
  if (state === undefined || groupId === undefined) return undefined;
  return { state, groupId: Number(groupId) };
}
