import type { Stats } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { nodeCrypto, nodeFs, nodeFsPromises } from '../lazy-builtins.js';
import { type ReapRegistration, reapOnParentDeath } from './sandbox-reaper.js';
import { SandboxWorkspaceError, type SandboxWorkspaceProblem } from './sandbox-workspace-error.js';

const { lstatSync, mkdirSync, realpathSync } = nodeFs();

/** The options of {@link createSandboxWorkspace}. */
export interface SandboxWorkspaceOptions {
  /**
   * The directory to make workspaces in. Default: `os.tmpdir()`. When only this process's user can
   * enter it (it owns it, mode 0700 or stricter), workspaces go straight into it; otherwise into
   * `ghost-sandbox-<uid>` inside it, which is made with mode 0700 (and refused if someone else made
   * it). It, and every directory above it, must be changeable only by root or this user (or carry
   * the sticky bit, as `/tmp` does).
   */
  readonly root?: string;
  /** How the directory's name starts, before a random part. Default: `ghost-workspace-`. */
  readonly prefix?: string;
}

/** A workspace made by {@link createSandboxWorkspace}: which directory it is, and its reaper entry. */
interface MadeWorkspace {
  readonly device: number;
  readonly inode: number;
  readonly registration: ReapRegistration;
}

/** Shared by every copy of `@ghost/core` in this thread: a backend of one copy accepts another's. */
const madeKey = Symbol.for('ghost.sandbox.workspaces');

function madeWorkspaces(): Map<string, MadeWorkspace> {
  const holder = globalThis as { [madeKey]?: Map<string, MadeWorkspace> };
  holder[madeKey] ??= new Map();
  return holder[madeKey];
}

const prefixPattern = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Makes a fresh workspace for one sandboxed process: an empty directory, mode 0700, owned by this
 * process's user, inside a directory only that user can enter, reached without a symbolic link.
 * Backends take over only workspaces made here (in this process, and still the same directory):
 * they hand them to the program, mount them writable and remove them on `close()`, and refuse any
 * other path with a `SandboxWorkspaceError`, so no link or system directory given as a workspace
 * is ever changed or removed. Put the program's input files in it before `spawn` if it needs any.
 *
 * The workspace is also handed to this process's reaper before it exists, so if this process dies
 * at any moment before the workspace is removed, the reaper removes it. Remove one that no
 * sandbox took over with {@link removeSandboxWorkspace}.
 *
 * @throws SandboxWorkspaceError (`problem: 'unsafe-root'` or `'not-private'`) when the root does
 *   not exist, another user could change it or a directory above it, or `ghost-sandbox-<uid>`
 *   inside it was made by someone else.
 *
 * @example
 * ```ts
 * const workspace = await createSandboxWorkspace({ root: runtime.workspaceRoot });
 * const child = await backend.spawn({ command, args, env: {}, runtimePaths, workspace });
 * await child.close(); // removes the workspace
 * ```
 */
export async function createSandboxWorkspace(options: SandboxWorkspaceOptions = {}): Promise<string> {
  const prefix = options.prefix ?? 'ghost-workspace-';
  if (typeof prefix !== 'string' || !prefixPattern.test(prefix)) {
    throw new TypeError(
      `A workspace prefix is 1 to 64 letters, digits, '.', '_' or '-', got ${JSON.stringify(prefix)}.`,
    );
  }
  const folder = privateFolder(resolve(options.root ?? tmpdir()));
  for (;;) {
    const path = join(folder, `${prefix}${nodeCrypto().randomBytes(8).toString('hex')}`);
    // Registered first: from here on, this process dying leaves the reaper to remove it.
    const registration = await reapOnParentDeath({ directory: path });
    try {
      await nodeFsPromises().mkdir(path, { mode: 0o700 });
    } catch (error) {
      await registration.release();
      // A name another workspace already has: draw another.
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw error;
    }
    const stats = lstatSync(path);
    madeWorkspaces().set(path, { device: stats.dev, inode: stats.ino, registration });
    return path;
  }
}

/**
 * Removes a workspace {@link createSandboxWorkspace} made, with everything in it, and tells the
 * reaper to forget it. A sandbox's `close()` does this; call it for a workspace no sandbox took
 * over (its `spawn` failed, or none was started). A path `createSandboxWorkspace()` did not make
 * is left alone. Idempotent.
 *
 * @throws Error when the directory cannot be removed (it stays registered, so the reaper still
 *   removes it when this process exits), or when something else has taken its place (that is
 *   left as it is).
 */
export async function removeSandboxWorkspace(path: string): Promise<void> {
  const key = resolve(path);
  const made = madeWorkspaces().get(key);
  if (made === undefined) return;
  const stats = statsOf(key);
  if (stats !== undefined && !isSameDirectory(stats, made)) {
    // Only the reaper's entry goes: what is there now was not made here.
    madeWorkspaces().delete(key);
    await made.registration.release();
    throw new Error(
      `${key} is no longer the workspace that was made there (something replaced it), so it was left as it is.`,
    );
  }
  if (stats !== undefined) await nodeFsPromises().rm(key, { recursive: true, force: true, maxRetries: 3 });
  madeWorkspaces().delete(key);
  await made.registration.release();
}

/**
 * Checks that `path` is a workspace a backend may take over, and resolves nothing: the path given
 * is the one used. It must be a directory {@link createSandboxWorkspace} made in this process (the
 * same device and inode), reached without a symbolic link, owned by this user with no access for
 * others, inside a directory that is too.
 *
 * @throws SandboxWorkspaceError naming the path and the problem.
 */
export function checkSandboxWorkspace(path: string, field = 'workspace'): void {
  const key = resolve(path);
  const stats = statsOf(key);
  const refuse = (problem: SandboxWorkspaceProblem, why: string) =>
    new SandboxWorkspaceError(
      `The spawn spec's ${field} ${path} ${why}. A backend takes over only a workspace createSandboxWorkspace() from @ghost/core/sandbox made in this process; make one with it, and pass the path it returns.`,
      { path, problem, option: field },
    );
  if (stats === undefined) throw refuse('missing', 'does not exist');
  if (stats.isSymbolicLink()) throw refuse('link', 'is a symbolic link, which is not followed');
  const made = madeWorkspaces().get(key);
  if (made === undefined) throw refuse('not-made-here', 'was not made by createSandboxWorkspace()');
  if (!isSameDirectory(stats, made)) {
    throw refuse('not-made-here', 'is no longer the directory createSandboxWorkspace() made there');
  }
  if (realPath(key) !== key) throw refuse('link', 'is reached through a symbolic link');
  const parent = statsOf(dirname(key));
  if (!isPrivate(stats) || parent === undefined || !isPrivate(parent)) {
    throw refuse(
      'not-private',
      `or the directory it is in can be entered by users other than uid ${effectiveUid()} (mode ${modeOf(stats)}, owner ${stats.uid})`,
    );
  }
}

/** Whether `path` is a workspace {@link createSandboxWorkspace} made in this process and still holds. */
export function isMadeWorkspace(path: string): boolean {
  return madeWorkspaces().has(resolve(path));
}

/**
 * The directory workspaces go in for `root`: `root` itself when it is private, else
 * `ghost-sandbox-<uid>` inside it. Synchronous: a few metadata reads.
 */
function privateFolder(root: string): string {
  const unusable = (why: string, problem: SandboxWorkspaceProblem = 'unsafe-root', cause?: unknown) =>
    new SandboxWorkspaceError(
      `The workspace root ${root} ${why}. Choose a root only root and uid ${effectiveUid()} can change (createSandboxWorkspace({ root }), or the runtime's workspaceRoot).`,
      { path: root, problem, option: 'root', ...(cause === undefined ? {} : { cause }) },
    );
  let real: string;
  try {
    real = realpathSync.native(root);
  } catch (error) {
    throw unusable(`cannot be used: ${(error as Error).message}`, 'missing', error);
  }
  for (let directory = real; ; directory = dirname(directory)) {
    const stats = statsOf(directory);
    if (stats === undefined || !stats.isDirectory())
      throw unusable(`has ${directory}, which is not a directory`);
    if (!isChangeableOnlyByUs(stats)) {
      throw unusable(
        `is inside ${directory} (mode ${modeOf(stats)}, owner ${stats.uid}), which another user could change`,
      );
    }
    if (directory === dirname(directory)) break;
  }
  if (isPrivate(statsOf(real) as Stats)) return real;
  const folder = join(real, `ghost-sandbox-${effectiveUid()}`);
  try {
    mkdirSync(folder, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw unusable(`cannot hold ${folder}: ${(error as Error).message}`, 'unsafe-root', error);
    }
  }
  const stats = statsOf(folder);
  if (stats === undefined || !isPrivate(stats)) {
    throw new SandboxWorkspaceError(
      `${folder}, where workspaces go under the root ${root}, is not a directory only uid ${effectiveUid()} can enter (${stats === undefined ? 'missing' : `mode ${modeOf(stats)}, owner ${stats.uid}${stats.isSymbolicLink() ? ', a symbolic link' : ''}`}). Remove it, or choose another root.`,
      { path: folder, problem: 'not-private', option: 'root' },
    );
  }
  return folder;
}

function isSameDirectory(stats: Stats, made: MadeWorkspace): boolean {
  return stats.isDirectory() && stats.dev === made.device && stats.ino === made.inode;
}

/** A real directory (not a link) owned by this user, with no access for group or others. */
function isPrivate(stats: Stats): boolean {
  return stats.isDirectory() && stats.uid === effectiveUid() && (stats.mode & 0o077) === 0;
}

/** Owned by root or this user, and writable by no one else (unless sticky, as /tmp is). */
function isChangeableOnlyByUs(stats: Stats): boolean {
  const owner = stats.uid === 0 || stats.uid === effectiveUid();
  const othersWrite = (stats.mode & 0o022) !== 0 && (stats.mode & 0o1000) === 0;
  return owner && !othersWrite;
}

function statsOf(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

function realPath(path: string): string | undefined {
  try {
    return realpathSync.native(path);
  } catch {
    return undefined;
  }
}

function modeOf(stats: Stats): string {
  return (stats.mode & 0o7777).toString(8).padStart(4, '0');
}

function effectiveUid(): number {
  return process.geteuid?.() ?? -1;
}
