import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  rename,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { planSandboxSpawn } from './sandbox-spawn-plan.js';
import {
  checkSandboxWorkspace,
  createSandboxWorkspace,
  removeSandboxWorkspace,
} from './sandbox-workspace.js';
import { SandboxWorkspaceError } from './sandbox-workspace-error.js';
import { checkSpawnDirectories } from './spawn-directories.js';

const uid = process.geteuid?.() ?? -1;

describe('sandbox workspaces', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function privateRoot(): Promise<string> {
    const root = await mkdtemp(join(tmpdir(), 'ghost-workspace-test-'));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    return root;
  }

  async function made(root: string): Promise<string> {
    const workspace = await createSandboxWorkspace({ root, prefix: 'ghost-test-' });
    cleanups.push(() => removeSandboxWorkspace(workspace));
    return workspace;
  }

  function refusal(path: string): SandboxWorkspaceError {
    try {
      checkSandboxWorkspace(path);
    } catch (error) {
      expect(SandboxWorkspaceError.isInstance(error), String(error)).toBe(true);
      return error as SandboxWorkspaceError;
    }
    throw new Error(`${path} was accepted`);
  }

  it('makes an empty 0700 directory of this user straight inside a root only this user can enter', async () => {
    const root = await privateRoot();
    const workspace = await made(root);
    expect(dirname(workspace)).toBe(root);
    expect(basename(workspace)).toMatch(/^ghost-test-[0-9a-f]{16}$/);
    const stats = await stat(workspace);
    expect({ uid: stats.uid, mode: stats.mode & 0o777 }).toEqual({ uid, mode: 0o700 });
    expect(await readdir(workspace)).toEqual([]);
    expect(() => checkSandboxWorkspace(workspace)).not.toThrow();
    await removeSandboxWorkspace(workspace);
    expect(await readdir(root)).toEqual([]);
  });

  it('puts workspaces in a 0700 ghost-sandbox-<uid> folder inside a root others can enter, such as /tmp', async () => {
    const root = await privateRoot();
    await chmod(root, 0o1777);
    const workspace = await made(root);
    const folder = join(root, `ghost-sandbox-${uid}`);
    expect(dirname(workspace)).toBe(folder);
    const stats = await lstat(folder);
    expect({ uid: stats.uid, mode: stats.mode & 0o777, isDirectory: stats.isDirectory() }).toEqual({
      uid,
      mode: 0o700,
      isDirectory: true,
    });
  });

  it('refuses a ghost-sandbox-<uid> folder that others can enter, or that is a link, naming it', async () => {
    const root = await privateRoot();
    await chmod(root, 0o1777);
    const folder = join(root, `ghost-sandbox-${uid}`);
    await mkdir(folder, { mode: 0o755 });
    await chmod(folder, 0o755);
    const open = await createSandboxWorkspace({ root }).catch((error: unknown) => error);
    expect(open).toMatchObject({ code: 'SANDBOX_WORKSPACE_REFUSED', problem: 'not-private', path: folder });
    await rm(folder, { recursive: true });
    const elsewhere = await privateRoot();
    await symlink(elsewhere, folder);
    const linked = await createSandboxWorkspace({ root }).catch((error: unknown) => error);
    expect(linked).toMatchObject({ code: 'SANDBOX_WORKSPACE_REFUSED', problem: 'not-private', path: folder });
    expect(await readdir(elsewhere)).toEqual([]);
  });

  it('refuses a root that another user could change, or that does not exist', async () => {
    const parent = await privateRoot();
    const shared = join(parent, 'shared');
    await mkdir(shared);
    // Writable by everyone without the sticky bit: anyone could swap what is inside.
    await chmod(shared, 0o777);
    await expect(createSandboxWorkspace({ root: shared })).rejects.toMatchObject({
      code: 'SANDBOX_WORKSPACE_REFUSED',
      problem: 'unsafe-root',
      path: shared,
    });
    await expect(createSandboxWorkspace({ root: join(parent, 'missing') })).rejects.toMatchObject({
      code: 'SANDBOX_WORKSPACE_REFUSED',
      problem: 'missing',
    });
  });

  it('refuses, without changing anything at it, a link to a workspace, a directory it did not make, and a workspace replaced since', async () => {
    const root = await privateRoot();
    const workspace = await made(root);
    const link = join(root, 'link');
    await symlink(workspace, link);
    expect(refusal(link)).toMatchObject({ problem: 'link', path: link, option: 'workspace' });

    const foreign = join(root, 'foreign');
    await mkdir(foreign, { mode: 0o700 });
    expect(refusal(foreign)).toMatchObject({ problem: 'not-made-here', path: foreign });
    expect(refusal(join(root, 'missing'))).toMatchObject({ problem: 'missing' });

    const replaced = await made(root);
    await rename(replaced, join(root, 'moved'));
    await mkdir(replaced, { mode: 0o700 });
    await writeFile(join(replaced, 'keep'), 'mine');
    expect(refusal(replaced)).toMatchObject({ problem: 'not-made-here', path: replaced });
    // close() would remove it: it is not what was made, so it stays.
    await expect(removeSandboxWorkspace(replaced)).rejects.toThrow(/no longer the workspace/);
    expect(await readdir(replaced)).toEqual(['keep']);
    expect(await readdir(join(root, 'moved'))).toEqual([]);
  });

  it('refuses a workspace reached through a linked directory, or one others can enter', async () => {
    const root = await privateRoot();
    const workspace = await made(root);
    const linkedRoot = `${root}-linked`;
    await symlink(root, linkedRoot);
    cleanups.push(() => rm(linkedRoot, { force: true }));
    expect(refusal(join(linkedRoot, basename(workspace)))).toMatchObject({ problem: 'not-made-here' });
    await chmod(workspace, 0o755);
    expect(refusal(workspace)).toMatchObject({ problem: 'not-private' });
  });

  it('is what checkSpawnDirectories checks: a plain directory given as the workspace is refused with a typed error', async () => {
    const plain = await mkdtemp(join(tmpdir(), 'ghost-not-a-workspace-'));
    cleanups.push(() => rm(plain, { recursive: true, force: true }));
    const plan = planSandboxSpawn(
      { command: process.execPath, args: [], env: {}, runtimePaths: [], workspace: plain, network: 'shared' },
      { name: 'test', capabilities: { ...noCapabilities } },
    );
    await expect(checkSpawnDirectories(plan)).rejects.toMatchObject({
      name: 'SandboxWorkspaceError',
      code: 'SANDBOX_WORKSPACE_REFUSED',
      problem: 'not-made-here',
      path: plain,
    });
    expect((await lstat(plain)).isDirectory()).toBe(true);
  });
});

const noCapabilities = {
  processTreeOwnership: false,
  subprocessDenial: false,
  networkIsolation: false,
  filesystemIsolation: false,
  memoryLimit: false,
  cpuLimit: false,
  fileSizeLimit: false,
  openFilesLimit: false,
  processLimit: false,
  syscallFilter: false,
  environmentIsolation: false,
};
