import { chmod, mkdir, mkdtemp, readdir, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CleanupError, ConfigurationError } from './errors.js';
import { Workspace } from './workspace.js';
import { WorkspaceClosedError } from './workspace-closed-error.js';

let root: string;

beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'ghost-workspace-test-')));
});

afterEach(async () => {
  // Every test must leave its root empty; the check is here so no test can forget it.
  const left = await readdir(root);
  await rm(root, { recursive: true, force: true });
  expect(left).toEqual([]);
});

describe('Workspace', () => {
  it('creates its directory only when first asked for it', async () => {
    const workspace = new Workspace({ root });

    expect(workspace.isCreated).toBe(false);
    expect(await readdir(root)).toEqual([]);

    const directory = await workspace.path();

    expect(workspace.isCreated).toBe(true);
    expect(dirname(directory)).toBe(root);
    expect(basename(directory)).toMatch(/^ghost-run-/);
    expect((await stat(directory)).isDirectory()).toBe(true);
    expect(await workspace.path()).toBe(directory);
    await workspace.close();
  });

  it('is private to its owner', async () => {
    const workspace = new Workspace({ root });

    const { mode } = await stat(await workspace.path());

    expect(mode & 0o077).toBe(0);
    await workspace.close();
  });

  it('removes the directory and everything in it on close', async () => {
    const workspace = new Workspace({ root });
    const directory = await workspace.path();
    await mkdir(join(directory, 'nested', 'deeper'), { recursive: true });
    await writeFile(join(directory, 'nested', 'deeper', 'out.txt'), 'data');

    await workspace.close();

    expect(workspace.isCreated).toBe(false);
    expect(workspace.isClosed).toBe(true);
    await expect(stat(directory)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('closes idempotently, also when closes overlap', async () => {
    const workspace = new Workspace({ root });
    await workspace.path();

    await Promise.all([workspace.close(), workspace.close()]);
    await workspace.close();

    expect(await readdir(root)).toEqual([]);
  });

  it('tolerates the directory being removed by someone else first, as a sandbox close() does', async () => {
    const workspace = new Workspace({ root });
    await rm(await workspace.path(), { recursive: true });

    await expect(workspace.close()).resolves.toBeUndefined();
  });

  it('creates nothing when closed before use, and refuses path() after close', async () => {
    const workspace = new Workspace({ root });

    await workspace.close();
    const error = await workspace.path().catch((caught: unknown) => caught);

    expect(WorkspaceClosedError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'WORKSPACE_CLOSED' });
    expect(workspace.isCreated).toBe(false);
    expect(await readdir(root)).toEqual([]);
  });

  it('makes one directory for concurrent first calls', async () => {
    const workspace = new Workspace({ root });

    const paths = await Promise.all([workspace.path(), workspace.path(), workspace.path()]);

    expect(new Set(paths).size).toBe(1);
    expect(await readdir(root)).toHaveLength(1);
    await workspace.close();
  });

  it('removes a directory still being created when closed, and path() then refuses', async () => {
    const workspace = new Workspace({ root });

    const pending = workspace.path().catch((caught: unknown) => caught);
    await workspace.close();

    expect(WorkspaceClosedError.isInstance(await pending)).toBe(true);
    expect(await readdir(root)).toEqual([]);
  });

  it('reports a missing root as a configuration error, and can be closed after', async () => {
    const workspace = new Workspace({ root: join(root, 'missing') });

    const error = await workspace.path().catch((caught: unknown) => caught);

    expect(ConfigurationError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'WORKSPACE_ROOT_MISSING' });
    expect((error as Error).message).toContain(join(root, 'missing'));
    await expect(workspace.close()).resolves.toBeUndefined();
  });

  it.skipIf(process.getuid?.() === 0)(
    'raises CleanupError when the directory cannot be removed (not as root, which may remove anything)',
    async () => {
      const workspace = new Workspace({ root });
      const directory = await workspace.path();
      const locked = join(directory, 'locked');
      await mkdir(locked);
      await writeFile(join(locked, 'file'), 'x');
      await chmod(locked, 0o500);

      try {
        const error = await workspace.close().catch((caught: unknown) => caught);
        expect(CleanupError.isInstance(error)).toBe(true);
        expect((error as Error).message).toContain(directory);
      } finally {
        await chmod(locked, 0o700);
      }
      // A later close() retries and, now that it can, succeeds.
      await workspace.close();
      expect(await readdir(root)).toEqual([]);
    },
  );

  it('defaults its root to the system temporary directory', () => {
    expect(new Workspace().root).toBe(tmpdir());
  });
});
