import { realpath, stat } from 'node:fs/promises';
import { ConfigurationError } from '../errors.js';
import { isInside, type SandboxSpawnPlan } from './sandbox-spawn-plan.js';

/**
 * The plan with every path it lets the process reach made canonical, the part of a spawn spec
 * {@link planSandboxSpawn} leaves to `spawn` because it needs the filesystem: the workspace, the
 * working directory and each runtime path resolved once with `realpath`, runtime paths that turn
 * out equal listed once. A sandbox mounts or allows exactly what it is given, and a link is not
 * what it points to: bubblewrap cannot mount onto a path that is a link inside a directory it has
 * already mounted (a package manager's `node_modules/<name>`), and a rule for a link's path does
 * not cover its target. Call it before starting anything, so a bad path is the caller's mistake,
 * not a failed sandbox. It also does what {@link checkSpawnDirectories} does.
 *
 * @throws ConfigurationError naming the field and the path, when one does not exist, when the
 *   workspace or working directory is not a directory, or when the working directory's real path
 *   is outside the workspace and the runtime paths (a link pointing elsewhere).
 *
 * @example
 * ```ts
 * const plan = await resolveSpawnPaths(planSandboxSpawn(spec, { name: 'jail', capabilities }));
 * plan.runtimePaths; // real paths, each once
 * ```
 */
export async function resolveSpawnPaths(plan: SandboxSpawnPlan): Promise<SandboxSpawnPlan> {
  const workspace = await realDirectory(plan.workspace, 'workspace');
  const cwd = plan.cwd === plan.workspace ? workspace : await realDirectory(plan.cwd, 'cwd');
  const runtimePaths: string[] = [];
  for (const [index, path] of plan.runtimePaths.entries()) {
    const real = await realPath(path, `runtimePaths[${index}]`);
    if (!runtimePaths.includes(real)) runtimePaths.push(real);
  }
  if (![workspace, ...runtimePaths].some((root) => isInside(cwd, root))) {
    throw new ConfigurationError(
      `The spawn spec's cwd ${plan.cwd} is really ${cwd}, neither inside the workspace ${workspace} nor inside a runtime path. Use a directory in one of them.`,
      { details: { cwd: plan.cwd, realCwd: cwd, workspace, runtimePaths } },
    );
  }
  return { ...plan, workspace, cwd, runtimePaths };
}

async function realPath(path: string, field: string): Promise<string> {
  return realpath(path).catch((error: unknown) => {
    throw new ConfigurationError(
      `The spawn spec's ${field} ${path} cannot be used: ${(error as Error).message}. Pass a path that exists.`,
      { cause: error, details: { [field]: path } },
    );
  });
}

async function realDirectory(path: string, field: string): Promise<string> {
  const real = await realPath(path, field);
  const found = await stat(real);
  if (!found.isDirectory()) {
    throw new ConfigurationError(
      `The spawn spec's ${field} ${path} is not a directory. Pass an existing directory.`,
      { details: { [field]: path } },
    );
  }
  return real;
}
