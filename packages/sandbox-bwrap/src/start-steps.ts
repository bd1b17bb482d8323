/**
 * The steps of starting one sandbox, in order, at which the tests that kill the parent stop it:
 * its cgroups made, the launcher started (waiting for its go line), the launcher handed to the
 * reaper, the go line sent (bubblewrap is setting the sandbox up), and the sandbox started (its
 * info read).
 */
export type BwrapStartStep =
  | 'cgroups made'
  | 'launcher started'
  | 'launcher registered'
  | 'bubblewrap starting'
  | 'sandbox started';

/** What a start has made by a step, for a test to check that none of it is left. */
export interface BwrapStartFacts {
  readonly workspace: string;
  readonly cgroups: readonly string[];
  readonly launcherPid?: number;
}

/**
 * A test seam, not an API: a test's parent process sets a function here to stop itself at a step
 * (it blocks there until the test kills it). Nothing else reads it; unset, a step costs one lookup.
 */
const listenerKey = Symbol.for('ghost.sandbox-bwrap.start-step');

/** Tells the test listener, if one is set, that the start has reached `step`. */
export function reachStartStep(step: BwrapStartStep, facts: BwrapStartFacts): void {
  const listener = (globalThis as Record<symbol, unknown>)[listenerKey];
  if (typeof listener === 'function') listener(step, facts);
}
