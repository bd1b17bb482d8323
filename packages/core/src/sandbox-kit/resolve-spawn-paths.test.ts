import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../errors.js';
import { noSandboxCapabilities } from '../sandbox.js';
import { resolveSpawnPaths } from './resolve-spawn-paths.js';
import { planSandboxSpawn } from './sandbox-spawn-plan.js';

const target = { name: 'test', capabilities: { ...noSandboxCapabilities } };
const directories: string[] = [];

afterEach(async () => {
  await Promise.all(directories.splice(0).map((path) => rm(path, { recursive: true, force: true })));
});

/** A real directory with `real/` (holding a file), `link` pointing at it, and `workspace/`. */
async function layout() {
  const base = await realpath(await mkdtemp(join(tmpdir(), 'ghost-spawn-paths-')));
  directories.push(base);
  await mkdir(join(base, 'real'));
  await writeFile(join(base, 'real', 'file.txt'), 'x');
  await symlink(join(base, 'real'), join(base, 'link'));
  await mkdir(join(base, 'workspace'));
  await symlink(join(base, 'workspace'), join(base, 'workspace-link'));
  return base;
}

function plan(base: string, spec: Partial<Parameters<typeof planSandboxSpawn>[0]> = {}) {
  return planSandboxSpawn(
    {
      command: '/bin/true',
      args: [],
      env: {},
      runtimePaths: [],
      workspace: join(base, 'workspace'),
      network: 'host',
      ...spec,
    },
    target,
  );
}

describe('resolveSpawnPaths', () => {
  it('resolves runtime paths and the workspace through links, listing paths that become equal once', async () => {
    const base = await layout();
    const resolved = await resolveSpawnPaths(
      plan(base, {
        runtimePaths: [join(base, 'link'), join(base, 'real'), join(base, 'link', 'file.txt')],
        workspace: join(base, 'workspace-link'),
      }),
    );
    expect(resolved.runtimePaths).toEqual([join(base, 'real'), join(base, 'real', 'file.txt')]);
    expect(resolved.workspace).toBe(join(base, 'workspace'));
    expect(resolved.cwd).toBe(join(base, 'workspace'));
  });

  it('refuses a runtime path that does not exist, naming it', async () => {
    const base = await layout();
    const missing = join(base, 'missing');
    const rejected = resolveSpawnPaths(plan(base, { runtimePaths: [join(base, 'real'), missing] }));
    await expect(rejected).rejects.toBeInstanceOf(ConfigurationError);
    await expect(rejected).rejects.toThrow(`runtimePaths[1] ${missing} cannot be used`);
  });

  it('refuses a working directory whose link leads outside the workspace and the runtime paths', async () => {
    const base = await layout();
    // Inside the workspace by name, in base/real in fact.
    await symlink(join(base, 'real'), join(base, 'workspace', 'escape'));
    const rejected = resolveSpawnPaths(plan(base, { cwd: join(base, 'workspace', 'escape') }));
    await expect(rejected).rejects.toBeInstanceOf(ConfigurationError);
    await expect(rejected).rejects.toThrow(/is really .* neither inside the workspace/);
  });

  it('refuses a workspace that is not a directory', async () => {
    const base = await layout();
    await expect(
      resolveSpawnPaths(plan(base, { workspace: join(base, 'real', 'file.txt') })),
    ).rejects.toThrow(/workspace .* is not a directory/);
  });
});
