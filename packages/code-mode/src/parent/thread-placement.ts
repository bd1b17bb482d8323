import type { CodeModePlacement } from '../engine.js';
import { CodeModeConfigurationError } from '../errors.js';

/** The stable code of the error {@link requireContainablePlacement} throws. */
const threadPlacementErrorCode = 'CODE_MODE_THREAD_NEEDS_UNRESTRICTED';

/**
 * Refuses `placement: 'thread'` with any sandbox but `'unrestricted'`: a worker thread runs the
 * program inside this process, where no sandbox reaches, so choosing it must mean choosing no
 * containment, by name. Every way to open a session passes here (`codeMode()`,
 * `openCodeModeSession`, and `openHostSession`, which engines' `open()` call), so none runs a
 * program uncontained while the settings name a sandbox.
 *
 * @throws {@link CodeModeConfigurationError} with code `CODE_MODE_THREAD_NEEDS_UNRESTRICTED`.
 */
export function requireContainablePlacement(
  placement: CodeModePlacement,
  sandboxName: string,
  where: string,
): void {
  if (placement !== 'thread' || sandboxName === 'unrestricted') return;
  throw new CodeModeConfigurationError(
    `${where}: placement 'thread' runs programs in worker threads of this process, where no sandbox can contain them, so it needs sandbox: 'unrestricted' named explicitly (the sandbox is '${sandboxName}'). Use placement 'process' or 'session' to run programs in the '${sandboxName}' sandbox.`,
    { code: threadPlacementErrorCode, placement, sandbox: sandboxName },
  );
}
