import { spawnSync } from 'node:child_process';
import { delimiter, join } from 'node:path';

/** An unprivileged user (`nobody`) that tests connect as, to be another client than this process. */
export const otherUid = 65534;

/**
 * A Node.js binary that {@link otherUid} can run, or undefined where there is none (this process
 * is not root, or every Node.js is in a directory only its owner may enter, as the LTS the suite
 * also runs on is, under root's home). This process's own comes first; then those on PATH.
 */
export const otherUserNode: string | undefined = findOtherUserNode();

function findOtherUserNode(): string | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const onPath = (process.env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .map((directory) => join(directory, 'node'));
  for (const candidate of [process.execPath, ...onPath]) {
    const probe = spawnSync(candidate, ['-e', ''], { uid: otherUid, gid: otherUid, stdio: 'ignore' });
    if (probe.status === 0) return candidate;
  }
  return undefined;
}

/** Why a case that connects as another user is skipped here, for its name; empty where it runs. */
export const otherUserSkipReason =
  otherUserNode !== undefined
    ? ''
    : process.getuid?.() !== 0
      ? ' (skipped: needs root, to connect as another user)'
      : ` (skipped: no Node.js here that user ${otherUid} may run)`;
