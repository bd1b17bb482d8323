import type { SandboxLimits } from '../sandbox.js';
import type { SandboxProcessTree } from './sandbox-process-tree.js';
import type { SandboxSpawnPlan } from './sandbox-spawn-plan.js';

/** The limits the parent enforces on a supervised sandbox: its wall timer, its abort signal and a backend's own watch. */
export interface SandboxLimitWatch {
  /** The first limit that killed the tree, if any. */
  readonly exceeded: () => keyof SandboxLimits | undefined;
  /** Stops the timer, the watch and the abort listener; idempotent. */
  readonly stop: () => void;
}

/**
 * Starts the wall timer (`limits.wallSeconds`), the backend's `watchLimits` and the plan's abort
 * signal, each killing the tree.
 */
export function watchSandboxLimits(
  plan: SandboxSpawnPlan,
  tree: SandboxProcessTree,
  watchLimits: ((exceeded: (limit: keyof SandboxLimits) => void) => () => void) | undefined,
): SandboxLimitWatch {
  let exceeded: keyof SandboxLimits | undefined;
  const killTree = () => {
    try {
      tree.signal('SIGKILL');
    } catch {
      // Called from a timer, an abort listener or a watch: nowhere to report to. close() checks
      // afterwards whether the tree really ended.
    }
  };
  const exceed = (limit: keyof SandboxLimits) => {
    exceeded ??= limit;
    killTree();
  };
  const wallSeconds = plan.limits.wallSeconds;
  const wallTimer =
    wallSeconds === undefined ? undefined : setTimeout(() => exceed('wallSeconds'), wallSeconds * 1_000);
  // The timer must not keep the parent alive on its own; the child's pipes already do while it runs.
  wallTimer?.unref();
  const stopWatch = watchLimits?.(exceed);
  const onAbort = () => killTree();
  plan.signal?.addEventListener('abort', onAbort, { once: true });
  let isWatching = true;
  const stop = () => {
    if (!isWatching) return;
    isWatching = false;
    if (wallTimer !== undefined) clearTimeout(wallTimer);
    stopWatch?.();
    plan.signal?.removeEventListener('abort', onAbort);
  };
  // The signal may have been aborted while the child was starting.
  if (plan.signal?.aborted) onAbort();
  return { exceeded: () => exceeded, stop };
}
