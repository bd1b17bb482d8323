import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { detectCgroups } from './cgroups.js';

// detectCgroups reads /proc/self/cgroup and /proc/self/mountinfo; these tests give it the files of
// other machines, with the cgroup mounts pointing into a temporary directory.
const roots: string[] = [];

afterEach(async () => {
  await Promise.all(roots.splice(0).map((root) => rm(root, { recursive: true, force: true })));
});

async function machine(options: {
  cgroup: string;
  mounts: string[];
  directories: string[];
  files?: Record<string, string>;
}) {
  const root = await mkdtemp(join(tmpdir(), 'ghost-cgroups-'));
  roots.push(root);
  for (const directory of options.directories) await mkdir(join(root, directory), { recursive: true });
  for (const [path, text] of Object.entries(options.files ?? {})) await writeFile(join(root, path), text);
  await writeFile(join(root, 'cgroup'), options.cgroup);
  await writeFile(
    join(root, 'mountinfo'),
    options.mounts.map((line) => line.replaceAll('ROOT', root)).join('\n'),
  );
  return { root, files: { selfCgroup: join(root, 'cgroup'), selfMountInfo: join(root, 'mountinfo') } };
}

describe('detectCgroups', () => {
  it('finds its own directories in the v1 memory and pids hierarchies', async () => {
    const { root, files } = await machine({
      cgroup: '9:pids:/\n4:memory:/process_api/abc\n1:cpu:/\n0::/\n',
      mounts: [
        '35 31 0:32 / ROOT/memory rw,relatime - cgroup cgroup rw,memory',
        '39 31 0:36 / ROOT/pids rw,relatime - cgroup cgroup rw,pids',
        '41 31 0:38 / ROOT/unified rw,relatime - cgroup2 cgroup2 rw',
      ],
      directories: ['memory/process_api/abc', 'pids', 'unified'],
    });
    expect(await detectCgroups(files)).toEqual({
      version: 1,
      memoryParent: join(root, 'memory/process_api/abc'),
      pidsParent: join(root, 'pids'),
      problems: [],
    });
  });

  it('maps a container whose hierarchy is mounted at its own cgroup', async () => {
    const { root, files } = await machine({
      cgroup: '4:memory:/docker/c1\n',
      mounts: ['35 31 0:32 /docker/c1 ROOT/memory rw - cgroup cgroup rw,memory'],
      directories: ['memory'],
    });
    expect(await detectCgroups(files)).toMatchObject({ version: 1, memoryParent: join(root, 'memory') });
  });

  it('uses the parent of its v2 cgroup when memory and pids are delegated there', async () => {
    const { root, files } = await machine({
      cgroup: '0::/app.service/main\n',
      mounts: ['30 23 0:26 / ROOT/cg rw - cgroup2 cgroup2 rw'],
      directories: ['cg/app.service/main'],
      files: { 'cg/app.service/cgroup.subtree_control': 'cpu memory pids\n' },
    });
    expect(await detectCgroups(files)).toEqual({
      version: 2,
      memoryParent: join(root, 'cg/app.service'),
      pidsParent: join(root, 'cg/app.service'),
      problems: [],
    });
  });

  it('finds nothing on v2 when no controller is delegated, or when the files cannot be read', async () => {
    const { files } = await machine({
      cgroup: '0::/user.slice/session-1.scope\n',
      mounts: ['30 23 0:26 / ROOT/cg rw - cgroup2 cgroup2 rw'],
      directories: ['cg/user.slice/session-1.scope'],
      files: { 'cg/user.slice/cgroup.subtree_control': 'cpu\n' },
    });
    expect(await detectCgroups(files)).toBeUndefined();
    expect(
      await detectCgroups({ selfCgroup: '/nonexistent/cgroup', selfMountInfo: '/nonexistent/mountinfo' }),
    ).toBeUndefined();
  });
});
