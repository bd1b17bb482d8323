import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Where stdio servers' cgroups are made: this process's own cgroup in one hierarchy (the unified
 * v2 one, else a v1 one), where it may create children. A cgroup holds a server and everything it
 * starts, whatever they do (`setsid`, a daemon's double fork), so ending it ends all of them. No
 * controller is needed, only the membership.
 */
interface CgroupHome {
  readonly directory: string;
  /** 0 for the unified hierarchy, 1 for v1's `pids`, 2 for another v1 hierarchy. */
  readonly rank: number;
}

/** The name of a server's cgroup: the pid of the Ghost process that made it, then a random part. */
const serverCgroupName = /^ghost-mcp-(\d+)-[0-9a-f]+$/;

let home: Promise<CgroupHome | undefined> | undefined;

/**
 * Makes a cgroup for one stdio server, or resolves undefined where none can be made (not Linux,
 * cgroups not mounted or not writable by this process). The first call finds where cgroups can be
 * made, once per process, and removes the empty cgroups of Ghost processes that no longer exist.
 */
export async function createServerCgroup(): Promise<string | undefined> {
  if (process.platform !== 'linux') return undefined;
  home ??= findCgroupHome();
  const found = await home;
  if (found === undefined) return undefined;
  const directory = join(found.directory, `ghost-mcp-${process.pid}-${randomBytes(6).toString('hex')}`);
  try {
    await mkdir(directory);
    return directory;
  } catch {
    return undefined;
  }
}

/** The processes in the cgroup now (an exited process is no longer a member, even unreaped). */
export async function cgroupMembers(directory: string): Promise<number[]> {
  const text = await readFile(join(directory, 'cgroup.procs'), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map(Number);
}

/**
 * Kills every process in the cgroup and removes it once it is empty. Resolves true when it is
 * gone (or was already), false when processes were still in it at `deadline` (a `Date.now()`).
 */
export async function endServerCgroup(directory: string, deadline: number): Promise<boolean> {
  for (;;) {
    const members = await cgroupMembers(directory);
    if (members.length === 0) {
      try {
        await rmdir(directory);
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true;
        // EBUSY: a process joined between the read and the removal; kill it on the next round.
      }
    }
    // cgroup.kill (v2, Linux 5.14) kills every member at once, even one forking right now.
    await writeFile(join(directory, 'cgroup.kill'), '1', { flag: 'r+' }).catch(() => {});
    for (const pid of members) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Finds the first hierarchy below whose own cgroup this process may create a directory. */
async function findCgroupHome(): Promise<CgroupHome | undefined> {
  let membership: string;
  let mountInfo: string;
  try {
    [membership, mountInfo] = await Promise.all([
      readFile('/proc/self/cgroup', 'utf8'),
      readFile('/proc/self/mountinfo', 'utf8'),
    ]);
  } catch {
    return undefined;
  }
  for (const candidate of candidates(membership, mountInfo)) {
    const probe = join(candidate.directory, `ghost-probe-${process.pid}-${randomBytes(4).toString('hex')}`);
    try {
      await mkdir(probe);
      await rmdir(probe);
    } catch {
      continue;
    }
    await removeStaleCgroups(candidate.directory);
    return candidate;
  }
  return undefined;
}

/** This process's own cgroup in each mounted hierarchy: the unified one first, then v1's, `pids` first. */
function candidates(membership: string, mountInfo: string): CgroupHome[] {
  const paths = new Map<string, string>();
  for (const line of membership.split('\n')) {
    const match = /^\d+:([^:]*):(.*)$/.exec(line);
    if (match) paths.set(match[1] ?? '', match[2] ?? '/');
  }
  const found: CgroupHome[] = [];
  for (const line of mountInfo.split('\n')) {
    // "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw"
    const [before, after] = line.split(' - ');
    if (before === undefined || after === undefined) continue;
    const fields = before.split(' ');
    const [type, , superOptions = ''] = after.split(' ');
    const root = unescapeMountPath(fields[3] ?? '/');
    const mountPoint = unescapeMountPath(fields[4] ?? '');
    if (type === 'cgroup2') {
      const path = paths.get('');
      if (path !== undefined) found.push({ directory: join(mountPoint, relativeTo(root, path)), rank: 0 });
    } else if (type === 'cgroup') {
      // The membership line names a v1 hierarchy by its controllers ("pids", "cpu,cpuacct", "name=systemd").
      const options = new Set(superOptions.split(','));
      const key = [...paths.keys()].find(
        (controllers) => controllers !== '' && controllers.split(',').every((each) => options.has(each)),
      );
      const path = key === undefined ? undefined : paths.get(key);
      if (path === undefined) continue;
      found.push({ directory: join(mountPoint, relativeTo(root, path)), rank: options.has('pids') ? 1 : 2 });
    }
  }
  return found.sort((first, second) => first.rank - second.rank);
}

/** A cgroup path as seen from a mount of part of the hierarchy (a container sees its own root). */
function relativeTo(root: string, path: string): string {
  if (root === '/') return path;
  if (path === root) return '';
  return path.startsWith(`${root}/`) ? path.slice(root.length) : path;
}

function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/**
 * Removes the empty server cgroups that Ghost processes which no longer exist left behind (a
 * process killed together with its watchdog removes nothing). One that holds processes stays:
 * rmdir refuses it.
 */
async function removeStaleCgroups(directory: string): Promise<void> {
  const entries = await readdir(directory).catch(() => [] as string[]);
  for (const entry of entries) {
    const owner = Number(serverCgroupName.exec(entry)?.[1]);
    if (!Number.isInteger(owner) || owner === process.pid || isAlive(owner)) continue;
    await rmdir(join(directory, entry)).catch(() => {});
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
