import { randomBytes } from 'node:crypto';
import { access, constants, mkdir, readdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type ReapRegistration, reapOnParentDeath } from '@ghost/core/sandbox';

/**
 * Where this process may create cgroups that bound a sandbox's memory and process count, found
 * without root by looking at the process's own cgroups. Each controller is optional: a machine may
 * delegate one and not the other.
 */
export interface CgroupSupport {
  /** `1` for the legacy per-controller hierarchies, `2` for the unified one. */
  readonly version: 1 | 2;
  /** The directory under which sandbox cgroups with a memory limit are made, when one is usable. */
  readonly memoryParent?: string;
  /** The directory under which sandbox cgroups with a pids limit are made, when one is usable. */
  readonly pidsParent?: string;
  /** Why a controller is not usable, for diagnostics. */
  readonly problems: readonly string[];
}

/** The files this module reads, so tests can point it at another root. */
export interface CgroupFiles {
  readonly selfCgroup: string;
  readonly selfMountInfo: string;
}

const procFiles: CgroupFiles = { selfCgroup: '/proc/self/cgroup', selfMountInfo: '/proc/self/mountinfo' };

/**
 * Finds the cgroups this process may delegate to sandboxes. On cgroup v2 that is the parent of its
 * own cgroup when `memory` or `pids` is enabled in the parent's `cgroup.subtree_control` and the
 * parent is writable (a delegated tree); on v1, its own directory in the `memory` and `pids`
 * hierarchies. Each candidate is proven by creating and removing a directory in it.
 * Returns undefined when neither controller is usable; it never asks for root.
 */
export async function detectCgroups(files: CgroupFiles = procFiles): Promise<CgroupSupport | undefined> {
  let membership: string;
  let mountInfo: string;
  try {
    [membership, mountInfo] = await Promise.all([
      readFile(files.selfCgroup, 'utf8'),
      readFile(files.selfMountInfo, 'utf8'),
    ]);
  } catch {
    return undefined;
  }
  const mounts = parseCgroupMounts(mountInfo);
  const memberships = parseMemberships(membership);
  const unified = memberships.get('');
  const unifiedMount = mounts.find((mount) => mount.version === 2);
  const v1Memory = locateV1('memory', memberships, mounts);
  const v1Pids = locateV1('pids', memberships, mounts);
  const problems: string[] = [];
  if (v1Memory !== undefined || v1Pids !== undefined) {
    const memoryParent = v1Memory && (await canCreateChildren(v1Memory, problems, 'memory'));
    const pidsParent = v1Pids && (await canCreateChildren(v1Pids, problems, 'pids'));
    if (memoryParent === undefined && pidsParent === undefined) return undefined;
    return {
      version: 1,
      ...(memoryParent ? { memoryParent } : {}),
      ...(pidsParent ? { pidsParent } : {}),
      problems,
    };
  }
  if (unified === undefined || unifiedMount === undefined) return undefined;
  // A v2 cgroup that holds processes cannot enable controllers for children ("no internal
  // processes"), so a delegated tree puts this process in a leaf and enables memory and pids one
  // level up (systemd's Delegate=yes with DelegateSubgroup=): sandboxes become our siblings there.
  const own = join(unifiedMount.mountPoint, relativeTo(unifiedMount.root, unified));
  const parent = dirname(own);
  if (parent.length < unifiedMount.mountPoint.length) return undefined;
  const enabled = await readFile(join(parent, 'cgroup.subtree_control'), 'utf8').catch(() => '');
  const controllers = new Set(enabled.trim().split(/\s+/));
  if (!controllers.has('memory') && !controllers.has('pids')) return undefined;
  if ((await canCreateChildren(parent, problems, 'cgroup v2')) === undefined) return undefined;
  if (!controllers.has('memory')) problems.push(`memory is not enabled in ${parent}/cgroup.subtree_control`);
  if (!controllers.has('pids')) problems.push(`pids is not enabled in ${parent}/cgroup.subtree_control`);
  return {
    version: 2,
    ...(controllers.has('memory') ? { memoryParent: parent } : {}),
    ...(controllers.has('pids') ? { pidsParent: parent } : {}),
    problems,
  };
}

interface CgroupMount {
  readonly version: 1 | 2;
  readonly root: string;
  readonly mountPoint: string;
  /** For v1, the controllers the hierarchy carries, from its super options (`rw,memory`). */
  readonly controllers: ReadonlySet<string>;
}

function parseCgroupMounts(mountInfo: string): CgroupMount[] {
  const mounts: CgroupMount[] = [];
  for (const line of mountInfo.split('\n')) {
    // "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory"
    const [before, after] = line.split(' - ');
    if (before === undefined || after === undefined) continue;
    const fields = before.split(' ');
    const [type, , superOptions = ''] = after.split(' ');
    const root = unescapeMountPath(fields[3] ?? '/');
    const mountPoint = unescapeMountPath(fields[4] ?? '');
    if (type === 'cgroup2') mounts.push({ version: 2, root, mountPoint, controllers: new Set() });
    if (type === 'cgroup')
      mounts.push({ version: 1, root, mountPoint, controllers: new Set(superOptions.split(',')) });
  }
  return mounts;
}

/** Maps each controller list ("memory", "cpu,cpuacct", "" for v2) to this process's cgroup path. */
function parseMemberships(membership: string): Map<string, string> {
  const byController = new Map<string, string>();
  for (const line of membership.split('\n')) {
    const match = line.match(/^\d+:([^:]*):(.*)$/);
    if (!match) continue;
    const [, controllers = '', path = '/'] = match;
    if (controllers === '') byController.set('', path);
    for (const controller of controllers.split(',')) if (controller) byController.set(controller, path);
  }
  return byController;
}

function locateV1(
  controller: string,
  memberships: Map<string, string>,
  mounts: CgroupMount[],
): string | undefined {
  const path = memberships.get(controller);
  const mount = mounts.find((candidate) => candidate.version === 1 && candidate.controllers.has(controller));
  if (path === undefined || mount === undefined) return undefined;
  return join(mount.mountPoint, relativeTo(mount.root, path));
}

/** A cgroup path as seen from a mount of part of the hierarchy (a container sees its own root). */
function relativeTo(root: string, path: string): string {
  if (root === '/') return path === '/' ? '' : path;
  return path === root ? '' : path.startsWith(`${root}/`) ? path.slice(root.length) : path;
}

function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

async function canCreateChildren(
  directory: string,
  problems: string[],
  label: string,
): Promise<string | undefined> {
  const probe = join(directory, `ghost-probe-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await access(directory, constants.W_OK);
    await mkdir(probe);
    await rmdir(probe);
    return directory;
  } catch (error) {
    problems.push(
      `cannot create ${label} cgroups in ${directory}: ${(error as NodeJS.ErrnoException).code ?? error}`,
    );
    return undefined;
  }
}

/** The cgroups made for one sandboxed process tree, removed by {@link SandboxCgroup.remove}. */
export interface SandboxCgroup {
  /** The cgroup directories, one per hierarchy (one on cgroup v2). */
  readonly directories: readonly string[];
  /**
   * The files the launcher writes `0` (itself) to before it starts bubblewrap: `tasks` in cgroup
   * v1, `cgroup.procs` in v2. The launcher is one thread, so joining its thread through v1's
   * `tasks` moves the whole process, and spares the kernel's global threadgroup lock, whose
   * grace-period wait made each join through `cgroup.procs` take 10 to 15 ms.
   */
  readonly joinFiles: readonly string[];
  /** True when the kernel killed a process of the cgroup for exceeding its memory limit. */
  oomKilled(): Promise<boolean>;
  /** The pids still in the cgroups. */
  members(): Promise<number[]>;
  /** Kills every process in the cgroups. */
  killAll(): Promise<void>;
  /** Removes the cgroups (they must be empty) and takes them back from the reaper. */
  remove(): Promise<void>;
}

/** Limits for {@link createSandboxCgroup}. */
export interface SandboxCgroupLimits {
  readonly memoryBytes?: number;
  readonly processes?: number;
}

/**
 * Makes the cgroups that hold one sandbox: a memory cgroup with `memoryBytes` (swap included, so
 * the limit cannot be dodged by swapping) and a pids cgroup with `processes`, each only when asked
 * for and supported. Each is handed to the parent's reaper before it is made, so a parent that
 * dies at any moment leaves none behind: the reaper kills what is in it and removes it.
 */
export async function createSandboxCgroup(
  support: CgroupSupport,
  limits: SandboxCgroupLimits,
): Promise<SandboxCgroup> {
  const name = `ghost-sandbox-${process.pid}-${randomBytes(6).toString('hex')}`;
  const directories: string[] = [];
  const made: string[] = [];
  const registrations: ReapRegistration[] = [];
  const makeDirectory = async (directory: string) => {
    registrations.push(await reapOnParentDeath({ cgroup: directory }));
    await mkdir(directory);
    made.push(directory);
  };
  const write = (directory: string, file: string, value: string) => writeFile(join(directory, file), value);
  // Some files exist only with some kernel options (swap accounting); 'r+' never creates one.
  const writeIfPresent = (directory: string, file: string, value: string) =>
    writeFile(join(directory, file), value, { flag: 'r+' }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  let memoryDirectory: string | undefined;
  try {
    if (limits.memoryBytes !== undefined && support.memoryParent !== undefined) {
      memoryDirectory = join(support.memoryParent, name);
      await makeDirectory(memoryDirectory);
      const bytes = String(Math.floor(limits.memoryBytes));
      if (support.version === 1) {
        await write(memoryDirectory, 'memory.limit_in_bytes', bytes);
        await writeIfPresent(memoryDirectory, 'memory.memsw.limit_in_bytes', bytes);
        await writeIfPresent(memoryDirectory, 'memory.swappiness', '0');
      } else {
        await write(memoryDirectory, 'memory.max', bytes);
        await writeIfPresent(memoryDirectory, 'memory.swap.max', '0');
      }
      directories.push(memoryDirectory);
    }
    if (limits.processes !== undefined && support.pidsParent !== undefined) {
      const pidsDirectory = join(support.pidsParent, name);
      if (pidsDirectory !== memoryDirectory) {
        await makeDirectory(pidsDirectory);
        directories.push(pidsDirectory);
      }
      await write(pidsDirectory, 'pids.max', String(Math.floor(limits.processes)));
    }
  } catch (error) {
    await Promise.allSettled(made.map((directory) => rmdir(directory)));
    await Promise.all(registrations.map((registration) => registration.release()));
    throw error;
  }
  const members = async () => {
    const lists = await Promise.all(
      directories.map((directory) => readFile(join(directory, 'cgroup.procs'), 'utf8').catch(() => '')),
    );
    return [...new Set(lists.join('\n').split('\n').filter(Boolean).map(Number))];
  };
  return {
    directories,
    joinFiles: directories.map((directory) =>
      join(directory, support.version === 1 ? 'tasks' : 'cgroup.procs'),
    ),
    async oomKilled() {
      if (memoryDirectory === undefined) return false;
      const file = support.version === 1 ? 'memory.oom_control' : 'memory.events';
      const text = await readFile(join(memoryDirectory, file), 'utf8').catch(() => '');
      return Number(text.match(/^oom_kill (\d+)/m)?.[1] ?? 0) > 0;
    },
    members,
    async killAll() {
      if (support.version === 2) {
        // cgroup.kill (Linux 5.14) kills every member atomically, even one forking right now.
        await Promise.allSettled(directories.map((directory) => write(directory, 'cgroup.kill', '1')));
      }
      for (const pid of await members()) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
    },
    async remove() {
      for (const directory of directories) await rmdir(directory);
      await Promise.all(registrations.map((registration) => registration.release()));
    },
  };
}

/** The name of a sandbox's cgroup: the pid of the Ghost process that made it, then a random part. */
const sandboxCgroupName = /^ghost-sandbox-(\d+)-[0-9a-f]+$/;

/**
 * Removes the empty cgroups that Ghost processes which no longer exist left behind: a process
 * killed with SIGKILL cannot remove its sandboxes' cgroups, and each would stay for ever. A cgroup
 * still holding processes is left alone (rmdir refuses it). Returns how many were removed.
 */
export async function removeStaleSandboxCgroups(support: CgroupSupport): Promise<number> {
  let removed = 0;
  const parents = [
    ...new Set([support.memoryParent, support.pidsParent].filter((parent) => parent !== undefined)),
  ];
  for (const parent of parents) {
    const entries = await readdir(parent).catch(() => [] as string[]);
    for (const entry of entries) {
      const owner = Number(entry.match(sandboxCgroupName)?.[1]);
      if (!Number.isInteger(owner) || owner === process.pid || isAlive(owner)) continue;
      try {
        await rmdir(join(parent, entry));
        removed += 1;
      } catch {
        // Still in use, or not ours to remove.
      }
    }
  }
  return removed;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
