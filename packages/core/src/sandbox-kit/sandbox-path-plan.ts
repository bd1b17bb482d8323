import { dirname, isAbsolute, join, resolve } from 'node:path';
import { ConfigurationError } from '../errors.js';
import { nodeFs } from '../lazy-builtins.js';
import { isInside, type SandboxSpawnPlan } from './sandbox-spawn-plan.js';
import { checkSandboxWorkspace } from './sandbox-workspace.js';

const { lstatSync, readlinkSync, realpathSync, statSync } = nodeFs();

/** Linux's own limit on links followed while resolving one path (`MAXSYMLINKS`). */
const largestLinkCount = 40;

/** A symbolic link a backend recreates inside the sandbox, so a path given through it resolves. */
export interface SandboxPathLink {
  /** Where the link is, outside every mounted path: a path the spec named, or one on its way. */
  readonly path: string;
  /**
   * The absolute real path the link leads to on the machine: a mounted path, a directory on the way
   * to one, or (inside the sandbox) nothing. Never a path that is not mounted anyway.
   */
  readonly target: string;
}

/**
 * What a sandbox makes visible for a {@link SandboxSpawnPlan}, with every symbolic link resolved
 * once. Built by {@link planSandboxPaths}.
 */
export interface SandboxPathPlan {
  /**
   * The real paths to show read-only: each runtime path's, listed once, none inside another one
   * (a runtime path inside the workspace stays, to be shown read-only over it).
   */
  readonly readPaths: readonly string[];
  /** The workspace's real path, the one path to show writable. */
  readonly workspace: string;
  /** The working directory's real path, inside the workspace or a read path. */
  readonly cwd: string;
  /**
   * Links to create in the sandbox (parents first is up to the backend), so that each runtime
   * path and the workspace resolve inside the sandbox by the path the spec gave, as they do
   * outside. Links inside a mounted path are not listed: the mount shows them as they are.
   */
  readonly links: readonly SandboxPathLink[];
}

/**
 * Resolves the paths of a plan for a backend that shows the process only part of the filesystem
 * (mounts, or path rules): what to mount, and which links to recreate. A sandbox shows exactly
 * what it is given, and a link is not what it points to: bubblewrap cannot mount onto a path that
 * is a link inside a directory it has already mounted (a package manager's `node_modules/<name>`),
 * and a link outside every mounted directory (an application's `node_modules/@scope/engine`)
 * would not exist inside, although Node resolves a package's dependencies from the link's own
 * location. So the plan mounts real paths and lists the links to recreate, each pointing at a
 * real path, which never shows more than the real paths asked for.
 *
 * The workspace is checked as {@link checkSpawnDirectories} checks it, so it is its own real path
 * and never a link. Links inside the workspace are the program's to make (the workspace is
 * writable), so a runtime path or working directory that reaches outside the workspace through
 * one is refused rather than followed. A backend that sees the real
 * filesystem (no mounts) does not need it. Call it before starting anything, so a bad path is the
 * caller's mistake, not a failed sandbox.
 *
 * @throws SandboxWorkspaceError naming the workspace, when it is not one `createSandboxWorkspace()`
 *   made (a link, a directory made otherwise, one replaced since); nothing at it was changed.
 * @throws ConfigurationError naming the field and the path, when one does not exist, when the
 *   working directory is not a directory, when the working directory's real path is
 *   outside the workspace and the read paths, or when a path leaves the workspace through a link
 *   inside it.
 *
 * @example
 * ```ts
 * const plan = planSandboxSpawn(spec, { name: 'jail', capabilities });
 * const paths = await planSandboxPaths(plan);
 * for (const path of paths.readPaths) args.push('--ro-bind', path, path);
 * args.push('--bind', paths.workspace, paths.workspace);
 * for (const link of paths.links) args.push('--symlink', link.target, link.path);
 * ```
 */
export async function planSandboxPaths(plan: SandboxSpawnPlan): Promise<SandboxPathPlan> {
  // Synchronous calls inside: a few hundred metadata reads of local paths on every spawn, each a
  // round trip through libuv's thread pool when asynchronous, cost more than they block.
  checkSandboxWorkspace(plan.workspace);
  const workspace = realDirectory(plan.workspace, 'workspace');
  const realPaths: string[] = [];
  for (const [index, path] of plan.runtimePaths.entries()) {
    realPaths.push(realPathOf(path, `runtimePaths[${index}]`));
  }
  const readPaths = outermostPaths(realPaths, workspace);
  const mounted = [...readPaths, workspace];
  const links = new Map<string, string>();
  const given = [
    ...plan.runtimePaths.map((path, index) => ({
      path,
      real: realPaths[index] as string,
      field: `runtimePaths[${index}]`,
    })),
    { path: plan.workspace, real: workspace, field: 'workspace' },
  ];
  for (const { path, real, field } of given) {
    for (const link of linksOnTheWay({ path, real, field }, mounted, workspace)) {
      links.set(link.path, link.target);
    }
  }
  const cwd = plan.cwd === plan.workspace ? workspace : realDirectory(plan.cwd, 'cwd');
  // Only checked: the process starts in the real directory, so its links need not exist inside.
  linksOnTheWay({ path: plan.cwd, real: cwd, field: 'cwd' }, mounted, workspace);
  if (!mounted.some((root) => isInside(cwd, root))) {
    throw new ConfigurationError(
      `The spawn spec's cwd ${plan.cwd} is really ${cwd}, neither inside the workspace ${workspace} nor inside a runtime path. Use a directory in one of them.`,
      { option: 'cwd', path: plan.cwd },
    );
  }
  return {
    readPaths,
    workspace,
    cwd,
    links: [...links].map(([path, target]) => ({ path, target })),
  };
}

/**
 * Each real path once, without those inside another read path: mounting a directory shows what
 * is inside it. One inside the workspace is kept, since it is asked to be read-only there.
 */
function outermostPaths(realPaths: readonly string[], workspace: string): string[] {
  const kept: string[] = [];
  for (const path of realPaths) {
    if (kept.includes(path)) continue;
    const covered = realPaths.some(
      (other) => other !== path && isInside(path, other) && !hasWorkspaceBetween(other, path, workspace),
    );
    if (!covered) kept.push(path);
  }
  return kept;
}

/**
 * Whether the workspace lies between `outer` and `path`: then `path` is shown over the writable
 * workspace and must be mounted itself to stay read-only.
 */
function hasWorkspaceBetween(outer: string, path: string, workspace: string): boolean {
  return workspace !== outer && isInside(workspace, outer) && isInside(path, workspace);
}

/**
 * The links to create so that `path` resolves inside the sandbox: those met on the way outside
 * every mounted path. Refuses a path that leaves the workspace through a link inside it.
 */
function linksOnTheWay(
  { path, real, field }: { readonly path: string; readonly real: string; readonly field: string },
  mounted: readonly string[],
  workspace: string,
): readonly SandboxPathLink[] {
  // A path that is its own real path goes through no link: every name leading to a real path is
  // a directory, not a link.
  if (real === resolve(path)) return [];
  // As the machine resolves it, every link followed by its own target: the chain a recreated link
  // skips is checked here.
  const onMachine = walkNames(path, field, () => false);
  if (onMachine.followed.some((link) => isInside(link, workspace)) && !isInside(onMachine.real, workspace)) {
    // Links in the workspace may have been made by a program: following one out of it would let a
    // program choose what a later sandbox shows.
    throw new ConfigurationError(
      `The spawn spec's ${field} ${path} leads out of the workspace ${workspace} through a link inside it, to ${onMachine.real}. Links in the workspace are not followed out of it: pass the real path.`,
      { option: field, path },
    );
  }
  const inSandbox = walkNames(path, field, (link) => !mounted.some((root) => isInside(link, root)));
  return inSandbox.recreated;
}

/** What {@link walkNames} found: the real path, and the links it recreated or followed. */
interface NameWalk {
  readonly real: string;
  readonly recreated: readonly SandboxPathLink[];
  readonly followed: readonly string[];
}

/**
 * Resolves `path` one name at a time, as the kernel does. A link for which `recreates` is true
 * is replaced by one pointing at its real path, so resolution goes on from there, as it will
 * inside the sandbox; any other link is followed by its own target (a mount shows it as it is).
 */
function walkNames(path: string, field: string, recreates: (link: string) => boolean): NameWalk {
  const recreated: SandboxPathLink[] = [];
  const followed: string[] = [];
  const pending = resolve(path).split('/');
  let current = '/';
  while (pending.length > 0) {
    const name = pending.shift() as string;
    if (name === '' || name === '.') continue;
    if (name === '..') {
      current = dirname(current);
      continue;
    }
    const next = join(current, name);
    const found = attempt(path, field, () => lstatSync(next));
    if (!found.isSymbolicLink()) {
      current = next;
      continue;
    }
    if (recreated.length + followed.length >= largestLinkCount) {
      throw new ConfigurationError(
        `The spawn spec's ${field} ${path} goes through more than ${largestLinkCount} symbolic links. Pass its real path.`,
        { option: field, path },
      );
    }
    if (recreates(next)) {
      const target = realPathOf(next, field);
      recreated.push({ path: next, target });
      current = target;
    } else {
      followed.push(next);
      const target = attempt(path, field, () => readlinkSync(next));
      if (isAbsolute(target)) current = '/';
      pending.unshift(...target.split('/'));
    }
  }
  return { real: current, recreated, followed };
}

function realPathOf(path: string, field: string): string {
  return attempt(path, field, () => realpathSync.native(path));
}

function realDirectory(path: string, field: string): string {
  const real = realPathOf(path, field);
  const found = attempt(path, field, () => statSync(real));
  if (!found.isDirectory()) {
    throw new ConfigurationError(
      `The spawn spec's ${field} ${path} is not a directory. Pass an existing directory.`,
      { option: field, path },
    );
  }
  return real;
}

/** `read()`, with a failure turned into the error naming the spec's field and path. */
function attempt<Result>(path: string, field: string, read: () => Result): Result {
  try {
    return read();
  } catch (error) {
    throw new ConfigurationError(
      `The spawn spec's ${field} ${path} cannot be used: ${(error as Error).message}. Pass a path that exists.`,
      { cause: error, option: field, path },
    );
  }
}
