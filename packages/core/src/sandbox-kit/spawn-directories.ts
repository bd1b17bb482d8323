import { ConfigurationError } from '../errors.js';
import { nodeFsPromises } from '../lazy-builtins.js';
import type { SandboxSpawnPlan } from './sandbox-spawn-plan.js';
import { checkSandboxWorkspace } from './sandbox-workspace.js';

/**
 * Checks the plan's workspace and working directory, the part of a spawn spec
 * {@link planSandboxSpawn} leaves to `spawn` because it needs the filesystem: the workspace must be
 * one `createSandboxWorkspace()` made in this process, still the same directory, reached without
 * a symbolic link, inside a directory only this user can enter (so no link, and no directory the
 * caller did not get from the kit, is ever taken over); the working directory must be a directory.
 * Call it before starting anything, so a bad path is the caller's mistake, not a failed sandbox.
 *
 * @throws SandboxWorkspaceError naming the workspace and why it was refused; nothing at the path
 *   was changed.
 * @throws ConfigurationError naming the field and the path, when the working directory is missing
 *   or not a directory.
 *
 * @example
 * ```ts
 * const plan = planSandboxSpawn(spec, { name: 'jail', capabilities });
 * await checkSpawnDirectories(plan);
 * ```
 */
export async function checkSpawnDirectories(plan: SandboxSpawnPlan): Promise<void> {
  checkSandboxWorkspace(plan.workspace);
  if (plan.cwd !== plan.workspace) await requireDirectory(plan.cwd, 'cwd');
}

async function requireDirectory(path: string, field: string): Promise<void> {
  const found = await nodeFsPromises()
    .stat(path)
    .catch((error: unknown) => {
      throw new ConfigurationError(
        `The spawn spec's ${field} ${path} cannot be used: ${(error as Error).message}. Pass an existing directory.`,
        { cause: error, option: field, path },
      );
    });
  if (!found.isDirectory()) {
    throw new ConfigurationError(
      `The spawn spec's ${field} ${path} is not a directory. Pass an existing directory.`,
      { option: field, path },
    );
  }
}
