import type { Stats } from 'node:fs';
import { ConfigurationError } from '@ghost/core/sandbox';

/** A uid and gid on the host, such as `{ uid: 65534, gid: 65534 }` (nobody, nogroup). */
export interface UnprivilegedIdentity {
  readonly uid: number;
  readonly gid: number;
}

/** Who programs run as when the parent is root and no `unprivilegedIdentity` is given: nobody, nogroup. */
export const defaultUnprivilegedIdentity: UnprivilegedIdentity = Object.freeze({ uid: 65534, gid: 65534 });

/**
 * Who the sandboxed program runs as, and how it gets there (see
 * `docs/decisions/2026-12-04-root-parent-identity.md`):
 *
 * - `'parent'`: the parent is not root. bubblewrap makes a user namespace that maps only the
 *   parent's own uid and gid, so the program runs as the parent's user.
 * - `'dropped'`: the parent is root. A user namespace made by root can only map its ids to real
 *   root, so bubblewrap runs as root without one (its mounts then reach runtime paths anywhere),
 *   and the command it starts is `setpriv`, which takes `uid` and `gid`, clears the supplementary
 *   groups and every capability set and then executes the program.
 */
export type BwrapIdentity =
  | { readonly kind: 'parent'; readonly uid: number; readonly gid: number }
  | {
      readonly kind: 'dropped';
      readonly uid: number;
      readonly gid: number;
      /** The real path of util-linux's `setpriv`, bound read-only into the sandbox. */
      readonly setpriv: string;
      /** The shared libraries `setpriv` loads, bound with it. */
      readonly setprivLibraries: readonly string[];
    };

/** The largest id a user namespace can map; `(uid_t)-1` itself means "no change" to the kernel. */
const largestId = 4_294_967_294;

/**
 * Checks the `unprivilegedIdentity` option: whole numbers, neither of them 0, which would be root.
 *
 * @throws ConfigurationError naming the bad field.
 */
export function checkUnprivilegedIdentity(identity: unknown): UnprivilegedIdentity {
  if (typeof identity !== 'object' || identity === null) {
    throw new ConfigurationError(
      `The bwrap option unprivilegedIdentity must be an object { uid, gid }, got ${String(identity)}.`,
    );
  }
  const { uid, gid } = identity as Record<string, unknown>;
  for (const [field, value] of [
    ['uid', uid],
    ['gid', gid],
  ] as const) {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > largestId) {
      throw new ConfigurationError(
        `The bwrap option unprivilegedIdentity.${field} must be a whole number from 1 to ${largestId} (0 is root), got ${String(value)}. The default is 65534, nobody.`,
        { option: `unprivilegedIdentity.${field}` },
      );
    }
  }
  return { uid: uid as number, gid: gid as number };
}

/** One line for `detect()`'s checks and `ghost-doctor`: who programs run as, and by what means. */
export function describeBwrapIdentity(identity: BwrapIdentity): string {
  if (identity.kind === 'parent') {
    return `programs run as uid ${identity.uid}, gid ${identity.gid}, the parent's own, mapped alone into a user namespace`;
  }
  return `the parent is root, so programs run as uid ${identity.uid}, gid ${identity.gid}, never as root: bubblewrap sets the sandbox up as root without a user namespace and setpriv drops to that identity, with no groups and no capabilities, before the program starts`;
}

/**
 * Whether `identity` may use a path with these stats: read it (and search it, for a directory),
 * or execute it when `purpose` is `'execute'`. Only the path's own mode bits count: inside the
 * sandbox its parent directories are bubblewrap's, open to everyone. The identity has no
 * supplementary groups.
 */
export function isUsableBy(
  identity: UnprivilegedIdentity,
  stats: Stats,
  purpose: 'read' | 'execute',
): boolean {
  const shift = stats.uid === identity.uid ? 6 : stats.gid === identity.gid ? 3 : 0;
  const bits = (stats.mode >> shift) & 0o7;
  if (purpose === 'execute') return (bits & 0o1) !== 0;
  return stats.isDirectory() ? (bits & 0o5) === 0o5 : (bits & 0o4) !== 0;
}
