import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

/** Who holds a session's lease: a process, named by its pid on a host. */
export interface LeaseHolder {
  readonly pid: number;
  /**
   * Where that pid means something: the host name and, on Linux, the boot and the pid namespace,
   * so a holder in another container (same file, other pids) is never judged by this one's pids.
   */
  readonly host: string;
}

let current: LeaseHolder | undefined;

/** This process as a lease holder. */
export function currentLeaseHolder(): LeaseHolder {
  current ??= { pid: process.pid, host: hostKey() };
  return current;
}

function hostKey(): string {
  const parts = [hostname()];
  if (process.platform === 'linux') {
    parts.push(readOr(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()));
    parts.push(readOr(() => readlinkSync('/proc/self/ns/pid')));
  }
  return parts.join('/');
}

function readOr(read: () => string): string {
  try {
    return read();
  } catch {
    return '?';
  }
}

/**
 * Whether `holder` has certainly ended: it ran where this process runs (same host key) and its pid
 * is gone or a zombie. Anything else (another host, a pid that may have been reused, no permission
 * to look) is not certain, and the lease then ends only when it expires.
 */
export function isHolderGone(holder: LeaseHolder): boolean {
  const here = currentLeaseHolder();
  if (holder.host !== here.host) return false;
  // kill(0) or a negative pid would ask about process groups: a row's pid must name one process.
  if (!Number.isSafeInteger(holder.pid) || holder.pid <= 0) return false;
  if (holder.pid === here.pid) return false;
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
  return isZombie(holder.pid);
}

/** A process that exited and waits for its parent to reap it (Linux; false elsewhere). */
function isZombie(pid: number): boolean {
  if (process.platform !== 'linux') return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The state follows the command name, which is in parentheses and may hold anything.
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return false;
  }
}
