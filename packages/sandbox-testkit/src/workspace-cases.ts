import { randomUUID } from 'node:crypto';
import { lstat, mkdir, readdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { SandboxWorkspaceError, type SandboxWorkspaceProblem } from '@ghost/core/sandbox';
import { expect } from 'vitest';
import type { ConformanceCase } from './conformance-case.js';
import type { SandboxHarness } from './sandbox-harness.js';

/** What a directory looks like, to show that a refused spawn changed nothing at it. */
interface DirectoryState {
  readonly uid: number;
  readonly gid: number;
  readonly mode: number;
  readonly entries: readonly string[];
}

async function stateOf(path: string): Promise<DirectoryState> {
  const stats = await lstat(path);
  return { uid: stats.uid, gid: stats.gid, mode: stats.mode, entries: (await readdir(path)).sort() };
}

/** A directory outside holding a file: what a link could point to, or a system directory stand-in. */
async function directoryWithFile(harness: SandboxHarness, prefix: string): Promise<string> {
  const path = await harness.outsideDirectory(prefix);
  await writeFile(join(path, 'kept.txt'), 'kept');
  return path;
}

/**
 * Spawns with `workspace` and expects a `SandboxWorkspaceError` naming it. A backend that starts
 * the process instead is closed first (as any caller would), so the case shows what that did.
 */
async function expectRefused(
  harness: SandboxHarness,
  workspace: string,
  problem: SandboxWorkspaceProblem,
): Promise<void> {
  let outcome: unknown;
  try {
    const child = await harness.backend.spawn(await harness.spec({ args: ['-e', ''], workspace }));
    await child.close();
    outcome = 'a started process, closed again';
  } catch (error) {
    if (SandboxWorkspaceError.isInstance(error)) {
      expect({ path: error.path, problem: error.problem }).toEqual({ path: workspace, problem });
      return;
    }
    outcome = error;
  }
  expect.fail(`expected a SandboxWorkspaceError (${problem}) naming ${workspace}, got ${String(outcome)}`);
}

/**
 * The workspace a backend takes over: only one `createSandboxWorkspace()` made, reached without a
 * link and still the same directory. Anything else is refused with a `SandboxWorkspaceError`
 * naming it, and nothing at it (or at what it points to) is changed, handed over or removed.
 * Every backend runs these: the check is the kit's, and a backend that skipped it would fail.
 */
export function workspaceCases(): ConformanceCase[] {
  return [
    {
      title:
        'refuses a workspace that is a symbolic link, naming it, and changes nothing at what it points to',
      run: async (harness) => {
        const target = await directoryWithFile(harness, 'ghost-testkit-link-target-');
        const made = await harness.workspace();
        // Beside the workspaces, where a mistaken or hostile caller would put it.
        const toOutside = join(dirname(made), `ghost-testkit-link-${randomUUID()}`);
        const toWorkspace = join(dirname(made), `ghost-testkit-link-${randomUUID()}`);
        await symlink(target, toOutside);
        await symlink(made, toWorkspace);
        harness.defer(() => rm(toOutside, { force: true }));
        harness.defer(() => rm(toWorkspace, { force: true }));
        const before = await stateOf(target);
        const madeBefore = await stateOf(made);
        await expectRefused(harness, toOutside, 'link');
        await expectRefused(harness, toWorkspace, 'link');
        expect(await stateOf(target), 'the link target: owner, mode and entries').toEqual(before);
        expect(await stateOf(made), 'the workspace the other link points to').toEqual(madeBefore);
        expect((await lstat(toOutside)).isSymbolicLink(), 'the link itself is left').toBe(true);
      },
    },
    {
      title:
        'refuses a directory createSandboxWorkspace() did not make, as a system directory would be, and leaves it and its files',
      run: async (harness) => {
        const plain = await directoryWithFile(harness, 'ghost-testkit-not-a-workspace-');
        const before = await stateOf(plain);
        await expectRefused(harness, plain, 'not-made-here');
        expect(await stateOf(plain), 'the directory: owner, mode and entries').toEqual(before);
      },
    },
    {
      title: 'refuses a workspace that was replaced after it was made, and leaves both directories',
      run: async (harness) => {
        const made = await harness.workspace();
        const moved = `${made}-moved`;
        await rename(made, moved);
        harness.defer(() => rm(moved, { recursive: true, force: true }));
        harness.defer(() => rm(made, { recursive: true, force: true }));
        await mkdir(made, { mode: 0o700 });
        await writeFile(join(made, 'kept.txt'), 'kept');
        const before = await stateOf(made);
        await expectRefused(harness, made, 'not-made-here');
        expect(await stateOf(made), 'the directory now at the path').toEqual(before);
        expect(await readdir(moved), 'the workspace that was made, moved away').toEqual([]);
      },
    },
  ];
}
