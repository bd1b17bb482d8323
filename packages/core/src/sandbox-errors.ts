import { GhostError, type GhostErrorInit, markErrorClass } from './ghost-error.js';

/** What {@link SandboxUnavailableError}'s constructor takes besides the message. */
export type SandboxUnavailableErrorInit = GhostErrorInit<'SANDBOX_UNAVAILABLE'> & {
  /** The sandbox backend that cannot contain the program, such as `bwrap`. */
  readonly backend?: string;
  /** The platform no sandbox is built in for, such as `win32`. */
  readonly platform?: string;
  /** The command that could not be started inside the sandbox. */
  readonly command?: string;
  /** The system error the command failed to start with, such as `ENOENT`. */
  readonly systemErrorCode?: string | undefined;
  /** The spawn-spec options the backend cannot honour here, such as `network` or `memoryBytes`. */
  readonly unsupported?: readonly string[];
  /** The file or directory the backend could not prepare, such as the workspace. */
  readonly path?: string;
};

/**
 * The requested sandbox cannot contain programs on this machine. Ghost fails closed: it never
 * falls back to running code unconfined. The message says what is missing and how to fix it.
 */
export class SandboxUnavailableError extends GhostError {
  static {
    markErrorClass(SandboxUnavailableError, 'SandboxUnavailableError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'SANDBOX_UNAVAILABLE';
  /** The sandbox backend that cannot contain the program, such as `bwrap`. */
  readonly backend: string | undefined;
  /** The platform no sandbox is built in for, such as `win32`. */
  readonly platform: string | undefined;
  /** The command that could not be started inside the sandbox. */
  readonly command: string | undefined;
  /** The system error the command failed to start with, such as `ENOENT`. */
  readonly systemErrorCode: string | undefined;
  /** The spawn-spec options the backend cannot honour here, such as `network` or `memoryBytes`. */
  readonly unsupported: readonly string[] | undefined;
  /** The file or directory the backend could not prepare, such as the workspace. */
  readonly path: string | undefined;

  constructor(message: string, init: SandboxUnavailableErrorInit = {}) {
    super(message, { ...init, code: 'SANDBOX_UNAVAILABLE' });
    this.backend = init.backend;
    this.platform = init.platform;
    this.command = init.command;
    this.systemErrorCode = init.systemErrorCode;
    this.unsupported = init.unsupported;
    this.path = init.path;
  }
}
