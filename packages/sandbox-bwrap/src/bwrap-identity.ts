import type { Stats } from 'node:fs';
import { ConfigurationError } from '@ghost/core/sandbox';

/**
 * The ids outside the sandbox that a root parent's programs run as: each program gets uid and gid `first + n`, where `n`
 * is the pid of its launcher, a process that lives as long as the sandbox does, so no two
 * sandboxes on the machine (in one pid namespace) ever share an identity. `count` must be at least
 * the kernel's `pid_max`, so every pid has an id.
 */
export interface UnprivilegedIds {
  /** The first id of the range; 0 (root) is never in it. */
  readonly first: number;
  /** How many ids the range holds: at least `/proc/sys/kernel/pid_max`. */
  readonly count: number;
}

/**
 * The default range: 4,194,304 ids (the largest `pid_max` Linux allows) from 2,113,929,216
 * (0x7E000000), above the ranges systemd hands to users, dynamic users and containers, and below
 * 2^31, where some tools misread ids.
 */
export const defaultUnprivilegedIds: UnprivilegedIds = Object.freeze({
  first: 2_113_929_216,
  count: 4_194_304,
});

/** The uid and gid one program runs as. */
export interface ProgramIds {
  readonly uid: number;
  readonly gid: number;
}

/**
 * Who the sandboxed program runs as, and how it gets there (see
 * `docs/decisions/2026-12-04-root-parent-identity.md` and
 * `docs/decisions/2026-12-05-sandbox-isolation.md`):
 *
 * - `'parent'`: the parent is not root. bubblewrap makes a user namespace that maps only the
 *   parent's own uid and gid, so the program runs as the parent's user.
 * - `'dropped'`: the parent is root. A user namespace made by root can only map its ids to real
 *   root, so bubblewrap runs as root without one (its mounts then reach runtime paths anywhere),
 *   and the command it starts is `setpriv`, which takes an identity of the program's own from
 *   `ids`, clears the supplementary groups and every capability set and then executes the program.
 */
export type BwrapIdentity =
  | { readonly kind: 'parent'; readonly uid: number; readonly gid: number }
  | {
      readonly kind: 'dropped';
      /** The range each program's own uid and gid come from. */
      readonly ids: UnprivilegedIds;
      /** The real path of util-linux's `setpriv`, bound read-only into the sandbox. */
      readonly setpriv: string;
      /** The shared libraries `setpriv` loads, bound with it. */
      readonly setprivLibraries: readonly string[];
    };

/** The largest id a user namespace can map; `(uid_t)-1` itself means "no change" to the kernel. */
const largestId = 4_294_967_294;

/**
 * Checks the `unprivilegedIds` option: whole numbers, a range that holds neither 0 (root) nor an
 * id past the largest.
 *
 * @throws ConfigurationError naming the bad field.
 */
export function checkUnprivilegedIds(ids: unknown): UnprivilegedIds {
  if (typeof ids !== 'object' || ids === null) {
    throw new ConfigurationError(
      `The bwrap option unprivilegedIds must be an object { first, count }, got ${String(ids)}.`,
      { option: 'unprivilegedIds' },
    );
  }
  const { first, count } = ids as Record<string, unknown>;
  if (typeof first !== 'number' || !Number.isInteger(first) || first < 1 || first > largestId) {
    throw new ConfigurationError(
      `The bwrap option unprivilegedIds.first must be a whole number from 1 to ${largestId} (0 is root), got ${String(first)}.`,
      { option: 'unprivilegedIds.first' },
    );
  }
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || first + count - 1 > largestId) {
    throw new ConfigurationError(
      `The bwrap option unprivilegedIds.count must be a whole number from 1 to ${largestId - first + 1} (the range ends at ${largestId}), got ${String(count)}.`,
      { option: 'unprivilegedIds.count' },
    );
  }
  return { first, count };
}

/**
 * The ids the program of the launcher with pid `launcherPid` runs as: `first + launcherPid`.
 * Undefined when the pid is past the range (the kernel's `pid_max` was raised above `count`).
 */
export function programIdsOf(ids: UnprivilegedIds, launcherPid: number): ProgramIds | undefined {
  if (!Number.isSafeInteger(launcherPid) || launcherPid < 0 || launcherPid >= ids.count) return undefined;
  return { uid: ids.first + launcherPid, gid: ids.first + launcherPid };
}

/** One line for `detect()`'s checks and `ghost-doctor`: who programs run as, and by what means. */
export function formatBwrapIdentity(identity: BwrapIdentity): string {
  if (identity.kind === 'parent') {
    return `programs run as uid ${identity.uid}, gid ${identity.gid}, the parent's own, mapped alone into a user namespace of each program's own`;
  }
  const last = identity.ids.first + identity.ids.count - 1;
  return `the parent is root, so each program runs as an identity no other sandbox has, uid and gid ${identity.ids.first} + the pid of its launcher (up to ${last}), never as root: bubblewrap sets the sandbox up as root without a user namespace and setpriv drops to that identity, with no groups and no capabilities, before the program starts`;
}

/**
 * Whether a root parent's programs may use a path with these stats: read it (and search it, for a
 * directory), or execute it when `purpose` is `'execute'`. Their ids own no file and they have no
 * supplementary groups, so only the bits for others count; and only the path's own: inside the
 * sandbox its parent directories are bubblewrap's, open to everyone.
 */
export function isUsableByOthers(stats: Stats, purpose: 'read' | 'execute'): boolean {
  const bits = stats.mode & 0o7;
  if (purpose === 'execute') return (bits & 0o1) !== 0;
  return stats.isDirectory() ? (bits & 0o5) === 0o5 : (bits & 0o4) !== 0;
}
