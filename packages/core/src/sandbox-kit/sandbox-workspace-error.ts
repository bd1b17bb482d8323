import { ConfigurationError } from '../configuration-error.js';
import { markErrorClass } from '../ghost-error.js';

/**
 * Why a workspace was refused:
 *
 * - `missing`: nothing is at the path.
 * - `link`: the path, or a directory on the way to it, is a symbolic link.
 * - `not-made-here`: it is not a directory `createSandboxWorkspace()` made in this process, or it
 *   has been removed and something else put in its place.
 * - `not-private`: it, or the directory it is in, is not a directory only this process's user can
 *   enter (owned by that user, no access for group or others).
 * - `unsafe-root`: the root to make workspaces in, or a directory above it, could be changed by
 *   another user, or the root is not a directory.
 */
export type SandboxWorkspaceProblem = 'missing' | 'link' | 'not-made-here' | 'not-private' | 'unsafe-root';

/** What {@link SandboxWorkspaceError}'s constructor takes besides the message. */
export interface SandboxWorkspaceErrorInit {
  /** What went wrong underneath, such as the failed `realpath`. */
  readonly cause?: unknown;
  /** The workspace, or the root, that was refused. */
  readonly path: string;
  /** Why it was refused. */
  readonly problem: SandboxWorkspaceProblem;
  /** The spawn-spec field or option that named it: `workspace`, or `root` for `createSandboxWorkspace()`. */
  readonly option?: string;
}

/**
 * A sandbox backend refused a workspace: a backend only takes over (hands to the program, mounts
 * writable, removes on `close()`) a directory the kit's `createSandboxWorkspace()` made in this
 * process, still the same directory, reached without a symbolic link, inside a directory only this
 * user can enter. Nothing was changed at `path`. Make the workspace with
 * `createSandboxWorkspace()` from `@ghost/core/sandbox`.
 *
 * @example
 * ```ts
 * if (SandboxWorkspaceError.isInstance(error)) console.error(error.problem, error.path);
 * ```
 */
export class SandboxWorkspaceError extends ConfigurationError {
  static {
    markErrorClass(SandboxWorkspaceError, 'SandboxWorkspaceError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'SANDBOX_WORKSPACE_REFUSED';
  /** The workspace, or the root, that was refused. */
  declare readonly path: string;
  /** Why it was refused. */
  readonly problem: SandboxWorkspaceProblem;

  constructor(message: string, init: SandboxWorkspaceErrorInit) {
    super(message, { ...init, option: init.option ?? 'workspace', code: 'SANDBOX_WORKSPACE_REFUSED' });
    this.problem = init.problem;
  }
}
