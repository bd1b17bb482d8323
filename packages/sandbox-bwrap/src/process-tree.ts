import { readdirSync, readFileSync } from 'node:fs';
import { readdir, readFile, readlink } from 'node:fs/promises';

/**
 * The pids of `root` and every process below it, found through each thread's `children` file
 * (processes that left the tree, such as a double fork reparented to the namespace's init, are
 * still below bubblewrap, because that init is).
 */
export async function processTree(root: number): Promise<number[]> {
  const found: number[] = [];
  const pending = [root];
  const seen = new Set<number>();
  while (pending.length > 0) {
    const pid = pending.pop()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    found.push(pid);
    const threads = await readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
    const lists = await Promise.all(
      threads.map((thread) => readFile(`/proc/${pid}/task/${thread}/children`, 'utf8').catch(() => '')),
    );
    for (const child of lists.join(' ').split(/\s+/)) if (child) pending.push(Number(child));
  }
  return found;
}

/**
 * The resident memory of the tree under `root`, in bytes, read synchronously: the memory sampler
 * runs every few milliseconds against a program that may allocate hundreds of MiB in a fraction of
 * a second, and a few small /proc reads cost less than waiting behind other work in the thread pool.
 */
export function treeResidentBytesSync(root: number): number {
  let total = 0;
  const pending = [root];
  const seen = new Set<number>();
  while (pending.length > 0) {
    const pid = pending.pop()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      total += Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024;
      for (const thread of readdirSync(`/proc/${pid}/task`)) {
        const children = readFileSync(`/proc/${pid}/task/${thread}/children`, 'utf8');
        for (const child of children.split(/\s+/)) if (child) pending.push(Number(child));
      }
    } catch {
      // The process ended between two reads: it holds no memory any more.
    }
  }
  return total;
}

/**
 * Whether the pid namespace whose init is `init` has ended. The kernel kills every process in a pid
 * namespace when its init exits, and waits for them before the init becomes a zombie, so a gone or
 * zombie init proves that nothing the sandbox started still runs, whatever it did to leave its
 * parent (setsid, a double fork, a new process group). Processes outside cannot join: the seccomp
 * filter denies `setns`, and only a privileged process outside could. A reused pid shows another
 * namespace, which also means ours is gone.
 */
export async function pidNamespaceEnded(init: number, namespaceInode: number): Promise<boolean> {
  const namespace = await readlink(`/proc/${init}/ns/pid`).catch(() => undefined);
  if (namespace !== `pid:[${namespaceInode}]`) return true;
  const stat = await readFile(`/proc/${init}/stat`, 'utf8').catch(() => undefined);
  if (stat === undefined) return true;
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state === 'Z' || state === 'X';
}

/**
 * The live (not zombie) processes in the pid namespace with this inode, looked up in the machine's
 * /proc: a scan of every process, used to name the survivors when `close()` fails.
 */
export async function processesInPidNamespace(namespaceInode: number): Promise<number[]> {
  const wanted = `pid:[${namespaceInode}]`;
  const entries = await readdir('/proc').catch(() => [] as string[]);
  const members = await Promise.all(
    entries
      .filter((entry) => /^\d+$/.test(entry))
      .map(async (entry) => {
        const namespace = await readlink(`/proc/${entry}/ns/pid`).catch(() => undefined);
        if (namespace !== wanted) return undefined;
        const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => undefined);
        const state = stat?.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
        return state === undefined || state === 'Z' || state === 'X' ? undefined : Number(entry);
      }),
  );
  return members.filter((pid): pid is number => pid !== undefined);
}

/** Sends a signal, ignoring a process that is already gone. */
export function signalQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // ESRCH: it already exited. EPERM cannot happen for our own sandbox; close() verifies anyway.
  }
}
