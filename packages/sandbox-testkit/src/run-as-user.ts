import { spawn } from 'node:child_process';

/** How a program started as another user ended: it could not be started, or what it printed. */
export type RunAsUser =
  | { readonly started: false; readonly errorCode: string }
  | { readonly started: true; readonly stdout: string };

/**
 * Runs `command` as `uid` and `gid` with no supplementary groups and an empty environment, as
 * another local user would (the test process must be root), and resolves with what it printed,
 * or with the error that kept it from starting (`EACCES` when the user cannot reach the file).
 */
export function runAsUser(
  command: string,
  args: readonly string[],
  identity: { readonly uid: number; readonly gid: number },
): Promise<RunAsUser> {
  return new Promise((resolve) => {
    const child = spawn(command, [...args], {
      uid: identity.uid,
      gid: identity.gid,
      env: {},
      cwd: '/',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 15_000,
    });
    let stdout = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    let failure: string | undefined;
    // A program that could not be started emits 'error', then 'close'.
    child.once('error', (error: NodeJS.ErrnoException) => {
      failure ??= error.code ?? error.message;
    });
    child.once('close', () => {
      resolve(failure === undefined ? { started: true, stdout } : { started: false, errorCode: failure });
    });
  });
}
