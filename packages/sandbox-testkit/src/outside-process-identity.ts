import { execFile } from 'node:child_process';
import { psPath } from './outside-process-table.js';

/** The uids and gids of a process as the machine outside the sandbox sees them, by `ps`. */
export interface OutsideProcessIdentity {
  /** Real, effective and saved uid. */
  readonly userIds: readonly number[];
  /** Real and saved gid: the keywords BSD and procps `ps` share (BSD has no effective gid one). */
  readonly groupIds: readonly number[];
}

/** Keywords both BSD `ps` (macOS) and procps `ps` (Linux) accept, each with an empty header. */
const identityKeywords = 'ruid=,uid=,svuid=,rgid=,svgid=';

/**
 * Who process `pid` runs as, seen from outside the sandbox with `ps -o ruid=,uid=,svuid=,rgid=,svgid= -p
 * <pid>`: the view a machine without `/proc` (macOS) has of a sandboxed process. Undefined when the
 * process is gone.
 */
export function outsideProcessIdentity(
  pid: number,
  ps: string = psPath,
): Promise<OutsideProcessIdentity | undefined> {
  return new Promise((resolve, reject) => {
    execFile(
      ps,
      ['-o', identityKeywords, '-p', String(pid)],
      { env: {}, timeout: 10_000 },
      (error, stdout) => {
        // ps exits 1 when no process matched.
        if (error !== null && stdout.trim() === '') {
          if (error.code === 1) resolve(undefined);
          else reject(new Error(`${ps} could not report process ${pid}: ${error.message}`, { cause: error }));
          return;
        }
        resolve(parseProcessIdentity(stdout));
      },
    );
  });
}

/** Reads one line of `ruid uid svuid rgid svgid`; undefined when it is not five numbers. */
export function parseProcessIdentity(text: string): OutsideProcessIdentity | undefined {
  const fields = text.trim().split(/\s+/).map(Number);
  if (fields.length !== 5 || !fields.every(Number.isSafeInteger)) return undefined;
  return { userIds: fields.slice(0, 3), groupIds: fields.slice(3) };
}
