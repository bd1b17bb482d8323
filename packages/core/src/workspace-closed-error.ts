import { GhostError, type GhostErrorInit, markErrorClass } from './ghost-error.js';

/** A closed {@link Workspace} was asked for its directory. */
export class WorkspaceClosedError extends GhostError {
  static {
    markErrorClass(WorkspaceClosedError, 'WorkspaceClosedError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'WORKSPACE_CLOSED';

  constructor(
    message = 'This workspace is closed and its directory removed: create a new Workspace for new work.',
    init: GhostErrorInit<'WORKSPACE_CLOSED'> = {},
  ) {
    super(message, { ...init, code: 'WORKSPACE_CLOSED' });
  }
}
