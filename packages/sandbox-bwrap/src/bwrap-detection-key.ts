import { readFile, realpath, stat } from 'node:fs/promises';
import { release } from 'node:os';
import type { BwrapSandboxOptions } from './bwrap-sandbox.js';
import { findExecutable } from './find-executable.js';

/** What a detection depends on for one executable: where it is and which build it is. */
async function executableIdentity(name: string): Promise<Record<string, unknown> | undefined> {
  const path = await findExecutable(name);
  if (path === undefined) return undefined;
  const real = await realpath(path);
  const { size, mtimeMs, ino, dev } = await stat(real);
  return { path, real, size, mtimeMs, ino, dev };
}

const readText = (path: string) =>
  readFile(path, 'utf8').then(
    (text) => text,
    () => undefined,
  );

/** The cgroup mounts of this process (root, mount point, type, super options), without mount ids. */
function cgroupMounts(mountInfo: string | undefined): string[] {
  const mounts: string[] = [];
  for (const line of (mountInfo ?? '').split('\n')) {
    const [before, after] = line.split(' - ');
    if (before === undefined || after === undefined || !after.startsWith('cgroup')) continue;
    const fields = before.split(' ');
    mounts.push([fields[3], fields[4], after].join(' '));
  }
  return mounts;
}

/**
 * The key a cached bubblewrap detection is valid for: everything its result depends on that can
 * change between two processes. bubblewrap's binary (its path, real path, device, inode, size and
 * modification time: a new version is a new file, so this names the version without running
 * `bwrap --version`, which would cost a process start on every cache hit), the same for bash,
 * prlimit and setpriv (which the launcher runs) and Node (which the proof runs, with its version),
 * the kernel release, this process's uid and gid, its cgroups and the cgroup mounts, the sysctls
 * that allow user namespaces, and the backend's options. Reading it costs a few `stat`s and file
 * reads, against a proof that starts a sandbox. Undefined when bubblewrap is not found: that
 * detection fails fast, and is never cached.
 */
export async function bwrapDetectionKey(options: BwrapSandboxOptions): Promise<string | undefined> {
  const bwrap = await executableIdentity(options.bwrapPath ?? 'bwrap');
  if (bwrap === undefined) return undefined;
  const [bash, prlimit, setpriv, node, cgroups, mountInfo, ...sysctls] = await Promise.all([
    executableIdentity('bash'),
    executableIdentity('prlimit'),
    executableIdentity('setpriv'),
    executableIdentity(process.execPath),
    readText('/proc/self/cgroup'),
    readText('/proc/self/mountinfo'),
    readText('/proc/sys/user/max_user_namespaces'),
    readText('/proc/sys/kernel/unprivileged_userns_clone'),
    readText('/proc/sys/kernel/apparmor_restrict_unprivileged_userns'),
    // A root parent's program ids come from a range that must hold every pid.
    readText('/proc/sys/kernel/pid_max'),
  ]);
  return JSON.stringify({
    bwrap,
    bash,
    prlimit,
    setpriv,
    node: { ...node, version: process.version, arch: process.arch },
    kernel: release(),
    uid: process.getuid?.(),
    gid: process.getgid?.(),
    cgroups,
    cgroupMounts: cgroupMounts(mountInfo),
    sysctls,
    options: {
      bwrapPath: options.bwrapPath,
      cgroups: options.cgroups ?? 'auto',
      unprivilegedIds: options.unprivilegedIds,
    },
  });
}
