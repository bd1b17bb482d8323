import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { packageRuntimePaths } from './runtime-paths.js';

let root: string | undefined;

afterEach(async () => {
  if (root) await rm(root, { recursive: true, force: true });
  root = undefined;
});

/** app → addon (a peer) → installer: a package tree in a temporary directory. */
async function packageTree(): Promise<string> {
  root = await realpath(await mkdtemp(join(tmpdir(), 'ghost-runtime-paths-')));
  const write = async (directory: string, manifest: object) => {
    await mkdir(directory, { recursive: true });
    await writeFile(join(directory, 'package.json'), JSON.stringify(manifest));
  };
  await write(join(root, 'app'), { name: 'app', peerDependencies: { addon: '*' } });
  await write(join(root, 'node_modules', 'addon'), { name: 'addon', dependencies: { installer: '*' } });
  await write(join(root, 'node_modules', 'installer'), { name: 'installer' });
  return root;
}

describe('packageRuntimePaths', () => {
  it('follows dependencies and required peers', async () => {
    const tree = await packageTree();
    expect(packageRuntimePaths(join(tree, 'app')).sort()).toEqual(
      [
        join(tree, 'app'),
        join(tree, 'node_modules', 'addon'),
        join(tree, 'node_modules', 'installer'),
      ].sort(),
    );
  });

  it('reads a package listed in withoutDependencies but none of its dependencies', async () => {
    const tree = await packageTree();
    expect(packageRuntimePaths(join(tree, 'app'), { withoutDependencies: ['addon'] }).sort()).toEqual(
      [join(tree, 'app'), join(tree, 'node_modules', 'addon')].sort(),
    );
  });
});
