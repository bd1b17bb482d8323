import { GhostError, type GhostErrorInit, markErrorClass } from './ghost-error.js';

/** What {@link CleanupError}'s constructor takes besides the message. */
export type CleanupErrorInit = GhostErrorInit<'CLEANUP_FAILED'> & {
  /** The directory that could not be removed. */
  readonly directory?: string;
  /** The sandbox backend whose process could not be closed. */
  readonly backend?: string;
  /** The process that could not be closed. */
  readonly pid?: number;
  /** Each thing that went wrong while closing. */
  readonly problems?: readonly string[];
};

/**
 * Releasing a resource failed, so Ghost cannot claim that everything the run started has ended.
 * Raised by `run.close()` and by anything that owns processes or files.
 */
export class CleanupError extends GhostError {
  static {
    markErrorClass(CleanupError, 'CleanupError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'CLEANUP_FAILED';
  /** The directory that could not be removed, when one could not. */
  readonly directory: string | undefined;
  /** The sandbox backend whose process could not be closed. */
  readonly backend: string | undefined;
  /** The process that could not be closed. */
  readonly pid: number | undefined;
  /** Each thing that went wrong while closing. */
  readonly problems: readonly string[] | undefined;

  constructor(message: string, init: CleanupErrorInit = {}) {
    super(message, { ...init, code: 'CLEANUP_FAILED' });
    this.directory = init.directory;
    this.backend = init.backend;
    this.pid = init.pid;
    this.problems = init.problems;
  }
}
