import { existsSync, realpathSync } from 'node:fs';
import { chmod, lstat, mkdir, mkdtemp, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ConfigurationError,
  createSandboxWorkspace,
  removeSandboxWorkspace,
  type SandboxProcess,
  type SandboxSpawnSpec,
} from '@ghost/core/sandbox';
import { afterEach, describe, expect, it } from 'vitest';
import { bwrapSandbox } from './bwrap-sandbox.js';
import { findExecutable } from './find-executable.js';

// Paths given through symbolic links, in real sandboxes: they need bubblewrap, and the case names
// say so where it is missing.
const node = realpathSync(process.execPath);
const hasBwrap = (await findExecutable('bwrap')) !== undefined;
const noBwrap = hasBwrap ? '' : ' (skipped: bubblewrap is not installed here)';

const started: SandboxProcess[] = [];
const directories: string[] = [];
const workspaces: string[] = [];

afterEach(async () => {
  await Promise.allSettled(started.splice(0).map((child) => child.close()));
  await Promise.all(workspaces.splice(0).map((path) => removeSandboxWorkspace(path)));
  await Promise.all(directories.splice(0).map((path) => rm(path, { recursive: true, force: true })));
});

async function makeWorkspace(): Promise<string> {
  const path = await createSandboxWorkspace({ prefix: 'ghost-bwrap-paths-workspace-' });
  workspaces.push(path);
  return path;
}

async function temporaryDirectory(prefix: string): Promise<string> {
  const path = realpathSync(await mkdtemp(join(tmpdir(), prefix)));
  directories.push(path);
  return path;
}

/** Starts `spec` in the bubblewrap sandbox and waits for it to end. */
async function run(spec: Partial<SandboxSpawnSpec> & Pick<SandboxSpawnSpec, 'args'>) {
  const workspace = spec.workspace ?? (await makeWorkspace());
  const child = await bwrapSandbox.spawn({ command: node, env: {}, runtimePaths: [], ...spec, workspace });
  started.push(child);
  const exit = await child.exited;
  return { exit, stdout: child.stdout.text, stderr: child.stderr.text };
}

/** A script that reports, for each path, its contents or the error code reading it gave. */
const readEach = `const fs = require('node:fs');
const read = (path) => { try { return fs.readFileSync(path, 'utf8'); } catch (error) { return error.code; } };
process.stdout.write(JSON.stringify(process.argv.slice(2).map(read)));`;

/**
 * An installed application laid out as a package manager does: `app/node_modules/@scope/engine`
 * links (relatively) to `store/engine`, which holds a host script and a data file, beside
 * `store/other`, which nobody asked for.
 */
async function installedApplication() {
  const base = await temporaryDirectory('ghost-bwrap-paths-');
  const store = join(base, 'store');
  await mkdir(join(store, 'engine'), { recursive: true });
  await mkdir(join(store, 'other'));
  await writeFile(join(store, 'engine', 'host.js'), readEach);
  await writeFile(join(store, 'engine', 'data.txt'), 'engine data');
  await writeFile(join(store, 'other', 'secret.txt'), 'not asked for');
  await mkdir(join(base, 'app', 'node_modules', '@scope'), { recursive: true });
  await writeFile(join(base, 'app', 'package.json'), '{}');
  await symlink('../../../store/engine', join(base, 'app', 'node_modules', '@scope', 'engine'));
  // mkdtemp makes base 0700; the program (uid 65534 under a root parent) reads only what it is given.
  await chmod(base, 0o755);
  return { base, store, linked: join(base, 'app', 'node_modules', '@scope', 'engine') };
}

describe('bwrapSandbox with paths given through links', () => {
  it.skipIf(!hasBwrap)(
    `runs a host script reached through a link outside every mount, reading through the link and the real path, and nothing else${noBwrap}`,
    async () => {
      const { base, store, linked } = await installedApplication();
      const { exit, stdout, stderr } = await run({
        args: [
          join(linked, 'host.js'),
          join(linked, 'data.txt'),
          join(store, 'engine', 'data.txt'),
          join(store, 'other', 'secret.txt'),
          join(base, 'app', 'package.json'),
        ],
        runtimePaths: [linked],
      });
      expect(stderr).toBe('');
      expect(exit).toMatchObject({ code: 0 });
      // The sibling of the link's target and the folder holding the link stay out of the sandbox.
      expect(JSON.parse(stdout)).toEqual(['engine data', 'engine data', 'ENOENT', 'ENOENT']);
    },
  );

  it.skipIf(!hasBwrap)(
    `reads through a link inside a mounted folder, as pnpm lays out node_modules${noBwrap}`,
    async () => {
      const { base, store, linked } = await installedApplication();
      const { exit, stdout, stderr } = await run({
        args: [
          join(linked, 'host.js'),
          join(linked, 'data.txt'),
          join(base, 'app', 'package.json'),
          join(store, 'other', 'secret.txt'),
        ],
        // The application folder holds the link, so the mount shows it as it is.
        runtimePaths: [join(base, 'app'), linked],
      });
      expect(stderr).toBe('');
      expect(exit).toMatchObject({ code: 0 });
      expect(JSON.parse(stdout)).toEqual(['engine data', '{}', 'ENOENT']);
    },
  );

  it.skipIf(!hasBwrap)(
    `refuses a workspace given through a link, or a directory the kit did not make, and leaves each as it was: not handed to the program, mounted or removed${noBwrap}`,
    async () => {
      // Stand-ins for /etc: a directory of the parent's, with a file in it.
      const system = await temporaryDirectory('ghost-bwrap-paths-system-');
      await chmod(system, 0o755);
      await writeFile(join(system, 'passwd'), 'root:x:0:0');
      const made = await makeWorkspace();
      const link = join(made, '..', `ghost-bwrap-paths-link-${process.pid}`);
      await symlink(system, link);
      directories.push(link);
      const before = await stat(system);
      for (const workspace of [link, system]) {
        const rejected = run({ args: ['-e', "require('fs').writeFileSync('planted', 'x')"], workspace });
        await expect(rejected).rejects.toMatchObject({ code: 'SANDBOX_WORKSPACE_REFUSED', path: workspace });
      }
      expect(started).toEqual([]);
      const after = await stat(system);
      expect({ uid: after.uid, gid: after.gid, mode: after.mode }).toEqual({
        uid: before.uid,
        gid: before.gid,
        mode: before.mode,
      });
      expect(await readdir(system)).toEqual(['passwd']);
      expect((await lstat(link)).isSymbolicLink()).toBe(true);
    },
  );

  it.skipIf(!hasBwrap)(
    `refuses a runtime path that does not exist, or leaves the workspace through a link in it, before starting anything${noBwrap}`,
    async () => {
      const { store } = await installedApplication();
      const workspace = await makeWorkspace();
      const missing = join(store, 'missing');
      const rejected = run({ args: ['-e', ''], runtimePaths: [missing], workspace });
      await expect(rejected).rejects.toBeInstanceOf(ConfigurationError);
      await expect(rejected).rejects.toMatchObject({ option: 'runtimePaths[0]', path: missing });
      await symlink(join(store, 'other'), join(workspace, 'planted'));
      await expect(
        run({ args: ['-e', ''], runtimePaths: [join(workspace, 'planted')], workspace }),
      ).rejects.toThrow(/leads out of the workspace/);
      expect(existsSync(workspace)).toBe(true);
      expect(started).toEqual([]);
    },
  );
});
