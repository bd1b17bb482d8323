import type { TrackedProcessTree } from './tracked-process-tree.js';

/**
 * How often the parent lists the sandbox's processes while it runs: to find descendants that left
 * the process group, and to add up the tree's resident memory against `limits.memoryBytes`. Each
 * sample runs `ps` once (a few milliseconds of CPU), so ten a second per running program is the
 * compromise between catching a fast allocation early and the cost on a machine running many.
 */
export const treeSampleMilliseconds = 100;

/** The options of {@link watchTree}. */
export interface TreeWatchOptions {
  /** The resident bytes the tree may hold; undefined to track descendants only. */
  readonly memoryBytes?: number;
  /** Called once, when a sample finds the tree over `memoryBytes`; sampling then stops. */
  readonly exceeded: () => void;
}

/**
 * Samples `tree` every {@link treeSampleMilliseconds} until stopped: each sample lists the
 * processes (which keeps the tree's descendants tracked) and compares the tree's resident size
 * with `memoryBytes`. A sample that fails (`ps` missing or killed) is skipped; the next one tries
 * again. Returns the function that stops the watch and kills a listing still running. Its timers
 * do not keep the parent alive.
 */
export function watchTree(tree: TrackedProcessTree, options: TreeWatchOptions): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const listing = new AbortController();
  const sample = async () => {
    let bytes: number | undefined;
    try {
      bytes = await tree.sample(listing.signal);
    } catch {
      // One missed sample; the wall clock and the rlimits still hold, and the next sample may work.
    }
    if (stopped) return;
    if (bytes !== undefined && options.memoryBytes !== undefined && bytes > options.memoryBytes) {
      stopped = true;
      options.exceeded();
      return;
    }
    schedule();
  };
  const schedule = () => {
    // sample() handles its own failures; the catch only keeps a throwing callback from floating.
    timer = setTimeout(() => sample().catch(() => undefined), treeSampleMilliseconds);
    timer.unref();
  };
  schedule();
  return () => {
    stopped = true;
    clearTimeout(timer);
    listing.abort();
  };
}
