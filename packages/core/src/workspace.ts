import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CleanupError, ConfigurationError } from './errors.js';
import { nodeFsPromises } from './lazy-builtins.js';
import { WorkspaceClosedError } from './workspace-closed-error.js';

/** The options of {@link Workspace}'s constructor. */
export interface WorkspaceOptions {
  /** The directory the workspace is created in. Default: `os.tmpdir()`. It must already exist. */
  readonly root?: string;
}

const directoryPrefix = 'ghost-run-';

/**
 * A run's private temporary directory, the only place its programs may write. The directory is
 * made on the first `await workspace.path()` (a run that never needs one never touches the
 * disk) and `close()` removes it with everything in it.
 *
 * @example
 * ```ts
 * const workspace = new Workspace();
 * try {
 *   await writeFile(join(await workspace.path(), 'input.csv'), csv);
 * } finally {
 *   await workspace.close();
 * }
 * ```
 */
export class Workspace {
  /** The directory the workspace is created in. */
  readonly root: string;
  #creating: Promise<string> | undefined;
  #directory: string | undefined;
  #closing: Promise<void> | undefined;
  #isClosed = false;

  constructor(options: WorkspaceOptions = {}) {
    // Resolved now, so a later process.chdir() cannot move where the directory goes.
    this.root = resolve(options.root ?? tmpdir());
  }

  /** True while the directory exists: after the first `path()` resolved, until `close()` removed it. */
  get isCreated(): boolean {
    return this.#directory !== undefined;
  }

  /** True once `close()` was called; `path()` then rejects. */
  get isClosed(): boolean {
    return this.#isClosed;
  }

  /**
   * The directory's absolute, symlink-free path, creating it (mode 0700) on the first call.
   * Concurrent first calls share one directory. Rejects with {@link WorkspaceClosedError} after `close()`.
   */
  async path(): Promise<string> {
    if (this.#isClosed) throw new WorkspaceClosedError();
    this.#creating ??= this.#create();
    const directory = await this.#creating;
    // close() may have been called while the directory was being made; it removes it.
    if (this.#isClosed) throw new WorkspaceClosedError();
    return directory;
  }

  /**
   * Removes the directory and everything in it. Idempotent; before the first `path()` it does
   * nothing. Rejects with a `CleanupError` when the directory cannot be removed; calling it
   * again retries.
   */
  close(): Promise<void> {
    this.#isClosed = true;
    this.#closing ??= this.#remove();
    return this.#closing;
  }

  async #create(): Promise<string> {
    let root: string;
    try {
      // Sandboxes bind and match real paths (macOS's tmpdir is a symlink into /private).
      root = await nodeFsPromises().realpath(this.root);
    } catch (cause) {
      this.#creating = undefined;
      throw new ConfigurationError(
        `The workspace root ${this.root} does not exist or cannot be read: create it, or set workspaceRoot to an existing directory.`,
        { code: 'WORKSPACE_ROOT_MISSING', path: this.root, cause },
      );
    }
    try {
      this.#directory = await nodeFsPromises().mkdtemp(join(root, directoryPrefix));
    } catch (error) {
      this.#creating = undefined;
      throw error;
    }
    return this.#directory;
  }

  async #remove(): Promise<void> {
    let directory: string | undefined;
    try {
      directory = await this.#creating;
    } catch {
      // Creation failed, so there is nothing to remove.
    }
    if (directory === undefined) return;
    try {
      await nodeFsPromises().rm(directory, { recursive: true, force: true, maxRetries: 3 });
    } catch (cause) {
      this.#closing = undefined;
      throw new CleanupError(
        `Could not remove the workspace ${directory}: ${String(cause)}. Check its permissions, then call close() again.`,
        {
          directory,
          cause,
        },
      );
    }
    this.#directory = undefined;
  }
}
