import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../errors.js';
import { noSandboxCapabilities, type SandboxSpawnSpec } from '../sandbox.js';
import { planSandboxPaths } from './sandbox-path-plan.js';
import { planSandboxSpawn } from './sandbox-spawn-plan.js';
import { createSandboxWorkspace, removeSandboxWorkspace } from './sandbox-workspace.js';

const target = { name: 'test', capabilities: { ...noSandboxCapabilities } };
const directories: string[] = [];
/** Each layout's workspace, made by the kit as a backend requires. */
const workspaces = new Map<string, string>();

afterEach(async () => {
  await Promise.all([...workspaces.values()].map((path) => removeSandboxWorkspace(path)));
  workspaces.clear();
  await Promise.all(directories.splice(0).map((path) => rm(path, { recursive: true, force: true })));
});

function workspaceOf(base: string): string {
  return workspaces.get(base) as string;
}

/**
 * A real temporary directory laid out like an installed application: `store/engine` (with
 * `index.js` and a sibling `store/secret`), `app/node_modules/@scope/engine` linking to it
 * relatively, and a workspace made by the kit.
 */
async function layout() {
  const base = await realpath(await mkdtemp(join(tmpdir(), 'ghost-path-plan-')));
  directories.push(base);
  await mkdir(join(base, 'store', 'engine'), { recursive: true });
  await mkdir(join(base, 'store', 'secret'));
  await writeFile(join(base, 'store', 'engine', 'index.js'), '');
  await mkdir(join(base, 'app', 'node_modules', '@scope'), { recursive: true });
  await symlink('../../../store/engine', join(base, 'app', 'node_modules', '@scope', 'engine'));
  workspaces.set(base, await createSandboxWorkspace({ root: base, prefix: 'workspace-' }));
  return base;
}

function plan(base: string, spec: Partial<SandboxSpawnSpec> = {}) {
  return planSandboxSpawn(
    {
      command: '/bin/true',
      args: [],
      env: {},
      runtimePaths: [],
      workspace: workspaceOf(base),
      network: 'shared',
      ...spec,
    },
    target,
  );
}

describe('planSandboxPaths', () => {
  it('leaves real paths as they are, with nothing to recreate', async () => {
    const base = await layout();
    const paths = await planSandboxPaths(plan(base, { runtimePaths: [join(base, 'store', 'engine')] }));
    expect(paths).toEqual({
      readPaths: [join(base, 'store', 'engine')],
      workspace: workspaceOf(base),
      cwd: workspaceOf(base),
      links: [],
    });
  });

  it('mounts the real path of a link outside every mount and recreates the link, pointing at it', async () => {
    const base = await layout();
    const linked = join(base, 'app', 'node_modules', '@scope', 'engine');
    const paths = await planSandboxPaths(plan(base, { runtimePaths: [linked] }));
    expect(paths.readPaths).toEqual([join(base, 'store', 'engine')]);
    expect(paths.links).toEqual([{ path: linked, target: join(base, 'store', 'engine') }]);
  });

  it('recreates the link on the way to a path inside a linked directory', async () => {
    const base = await layout();
    const linked = join(base, 'app', 'node_modules', '@scope', 'engine');
    const paths = await planSandboxPaths(plan(base, { runtimePaths: [join(linked, 'index.js')] }));
    expect(paths.readPaths).toEqual([join(base, 'store', 'engine', 'index.js')]);
    expect(paths.links).toEqual([{ path: linked, target: join(base, 'store', 'engine') }]);
  });

  it('recreates nothing for a link inside a mounted directory, which the mount shows as it is', async () => {
    const base = await layout();
    const linked = join(base, 'app', 'node_modules', '@scope', 'engine');
    const paths = await planSandboxPaths(plan(base, { runtimePaths: [join(base, 'app'), linked] }));
    expect(paths.readPaths).toEqual([join(base, 'app'), join(base, 'store', 'engine')]);
    expect(paths.links).toEqual([]);
  });

  it('follows a chain of links, recreating each one outside the mounts', async () => {
    const base = await layout();
    // links/engine -> app/node_modules/@scope/engine -> store/engine; only the chain's start is asked for.
    await mkdir(join(base, 'links'));
    await symlink(join(base, 'app', 'node_modules', '@scope', 'engine'), join(base, 'links', 'engine'));
    const paths = await planSandboxPaths(plan(base, { runtimePaths: [join(base, 'links', 'engine')] }));
    expect(paths.readPaths).toEqual([join(base, 'store', 'engine')]);
    // Recreated pointing at its real path, so the rest of the chain is not needed inside.
    expect(paths.links).toEqual([
      { path: join(base, 'links', 'engine'), target: join(base, 'store', 'engine') },
    ]);
  });

  it('follows a link inside a mount to a link outside every mount, and recreates the second', async () => {
    const base = await layout();
    // app/node_modules/@scope/other -> links/other (absolute) -> store/engine (relative).
    await mkdir(join(base, 'links'));
    await symlink('../store/engine', join(base, 'links', 'other'));
    await symlink(join(base, 'links', 'other'), join(base, 'app', 'node_modules', '@scope', 'other'));
    const paths = await planSandboxPaths(
      plan(base, { runtimePaths: [join(base, 'app'), join(base, 'app', 'node_modules', '@scope', 'other')] }),
    );
    expect(paths.readPaths).toEqual([join(base, 'app'), join(base, 'store', 'engine')]);
    expect(paths.links).toEqual([
      { path: join(base, 'links', 'other'), target: join(base, 'store', 'engine') },
    ]);
  });

  it('lists paths that turn out equal, or inside another read path, once', async () => {
    const base = await layout();
    const linked = join(base, 'app', 'node_modules', '@scope', 'engine');
    const paths = await planSandboxPaths(
      plan(base, {
        runtimePaths: [linked, join(base, 'store', 'engine', 'index.js'), join(base, 'store'), linked],
      }),
    );
    expect(paths.readPaths).toEqual([join(base, 'store')]);
    // The link is outside the mounts even though its target is inside one.
    expect(paths.links).toEqual([{ path: linked, target: join(base, 'store', 'engine') }]);
  });

  it('keeps a read path inside the workspace, to be shown read-only over it', async () => {
    const base = await layout();
    await mkdir(join(workspaceOf(base), 'fixed'));
    const paths = await planSandboxPaths(
      plan(base, { runtimePaths: [base, join(workspaceOf(base), 'fixed'), join(base, 'store')] }),
    );
    expect(paths.readPaths).toEqual([base, join(workspaceOf(base), 'fixed')]);
  });

  it('refuses a workspace given through a link, naming it, rather than mounting what it points to', async () => {
    const base = await layout();
    await symlink(workspaceOf(base), join(base, 'workspace-link'));
    await expect(
      planSandboxPaths(plan(base, { workspace: join(base, 'workspace-link') })),
    ).rejects.toMatchObject({
      code: 'SANDBOX_WORKSPACE_REFUSED',
      problem: 'link',
      path: join(base, 'workspace-link'),
    });
  });

  it('refuses a runtime path that does not exist, naming it', async () => {
    const base = await layout();
    const missing = join(base, 'missing');
    const rejected = planSandboxPaths(plan(base, { runtimePaths: [join(base, 'store'), missing] }));
    await expect(rejected).rejects.toBeInstanceOf(ConfigurationError);
    await expect(rejected).rejects.toMatchObject({ option: 'runtimePaths[1]', path: missing });
    await expect(rejected).rejects.toThrow(`runtimePaths[1] ${missing} cannot be used`);
  });

  it('refuses a runtime path through a dangling link, naming it', async () => {
    const base = await layout();
    await symlink(join(base, 'nowhere'), join(base, 'dangling'));
    const rejected = planSandboxPaths(plan(base, { runtimePaths: [join(base, 'dangling')] }));
    await expect(rejected).rejects.toThrow(`runtimePaths[0] ${join(base, 'dangling')} cannot be used`);
  });

  it('refuses a runtime path through more than 40 links (the limit Linux sets), naming it; 40 resolve', async () => {
    const base = await layout();
    // link-0 → link-1 → … → link-40 → store/engine: 41 links from link-0, 40 from link-1.
    await symlink(join(base, 'store', 'engine'), join(base, 'link-40'));
    for (let index = 39; index >= 0; index -= 1) {
      await symlink(join(base, `link-${index + 1}`), join(base, `link-${index}`));
    }
    const within = await planSandboxPaths(plan(base, { runtimePaths: [join(base, 'link-1')] }));
    expect(within.readPaths).toEqual([join(base, 'store', 'engine')]);
    const rejected = planSandboxPaths(plan(base, { runtimePaths: [join(base, 'link-0')] }));
    await expect(rejected).rejects.toBeInstanceOf(ConfigurationError);
    await expect(rejected).rejects.toMatchObject({ option: 'runtimePaths[0]', path: join(base, 'link-0') });
  });

  it('refuses a workspace or working directory that is missing or not a directory', async () => {
    const base = await layout();
    await expect(planSandboxPaths(plan(base, { workspace: join(base, 'none') }))).rejects.toThrow(
      /workspace .* does not exist/,
    );
    await expect(
      planSandboxPaths(plan(base, { workspace: join(base, 'store', 'engine', 'index.js') })),
    ).rejects.toThrow(/workspace .* was not made by createSandboxWorkspace/);
    await expect(
      planSandboxPaths(plan(base, { cwd: join(workspaceOf(base), 'gone') })),
    ).rejects.toMatchObject({ option: 'cwd' });
  });

  it('refuses to follow a link inside the workspace out of it, for a runtime path or the working directory', async () => {
    const base = await layout();
    // A program could have planted these: the workspace is writable.
    await symlink(join(base, 'store', 'secret'), join(workspaceOf(base), 'planted'));
    const readThrough = planSandboxPaths(plan(base, { runtimePaths: [join(workspaceOf(base), 'planted')] }));
    await expect(readThrough).rejects.toBeInstanceOf(ConfigurationError);
    await expect(readThrough).rejects.toThrow(/leads out of the workspace .* through a link inside it/);
    // Even when the path reaches the planted link through a link of its own outside the workspace.
    await symlink(join(workspaceOf(base), 'planted'), join(base, 'outside'));
    await expect(planSandboxPaths(plan(base, { runtimePaths: [join(base, 'outside')] }))).rejects.toThrow(
      /leads out of the workspace/,
    );
    await expect(
      planSandboxPaths(
        plan(base, { runtimePaths: [join(base, 'store')], cwd: join(workspaceOf(base), 'planted') }),
      ),
    ).rejects.toThrow(/cwd .* leads out of the workspace/);
  });

  it('follows a link inside the workspace that stays inside it', async () => {
    const base = await layout();
    await mkdir(join(workspaceOf(base), 'data'));
    await symlink('data', join(workspaceOf(base), 'alias'));
    const paths = await planSandboxPaths(plan(base, { cwd: join(workspaceOf(base), 'alias') }));
    expect(paths.cwd).toBe(join(workspaceOf(base), 'data'));
    expect(paths.links).toEqual([]);
  });

  it('refuses a working directory whose real path is outside the workspace and the read paths', async () => {
    const base = await layout();
    await symlink(join(base, 'store'), join(base, 'app', 'store-link'));
    const rejected = planSandboxPaths(
      plan(base, { runtimePaths: [join(base, 'app')], cwd: join(base, 'app', 'store-link') }),
    );
    await expect(rejected).rejects.toThrow(/cwd .* is really .*, neither inside the workspace/);
  });
});
