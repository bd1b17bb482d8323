import { createHook } from 'node:async_hooks';
import { fileURLToPath } from 'node:url';

/** A timer made by code other than the test runner, while it is alive. */
interface TrackedTimer {
  readonly order: number;
  readonly site: string;
  readonly timer: { hasRef(): boolean };
}

const thisFile = fileURLToPath(import.meta.url);
// The test runner keeps timers of its own (vitest throttles its progress reports with a 100 ms
// timer); whether one is pending when a test starts or ends depends on the machine's load, so
// counting them made the check flaky. Timers made from these packages are not the test's.
const runnerFrame = /[\\/](?:@vitest|vitest|birpc|tinypool|tinyspy)[\\/]/;
const liveTimers = new Map<number, TrackedTimer>();
const snapshotOrder = new WeakMap<Map<string, number>, number>();
let timersMade = 0;
let tracking = false;

/** Where `setTimeout`/`setInterval` was called: the first frame outside Node and this file. */
function timerSite(): string | undefined {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 16;
  const stack = new Error().stack ?? '';
  Error.stackTraceLimit = limit;
  const frames = stack.split('\n').slice(1);
  const caller = frames.find((frame) => !frame.includes('node:') && !frame.includes(thisFile));
  if (caller === undefined) return 'an unknown place';
  return runnerFrame.test(caller) ? undefined : caller.trim().replace(/^at /, '');
}

function trackTimers(): void {
  if (tracking) return;
  tracking = true;
  createHook({
    init(asyncId, type, _trigger, resource) {
      if (type !== 'Timeout') return;
      const site = timerSite();
      if (site === undefined) return;
      timersMade += 1;
      liveTimers.set(asyncId, { order: timersMade, site, timer: resource as TrackedTimer['timer'] });
    },
    destroy(asyncId) {
      liveTimers.delete(asyncId);
    },
  }).enable();
}

/**
 * Counts the timers, sockets and processes this Node process has open, by kind. Compare two
 * counts with {@link newOpenHandles} to prove a piece of work left nothing running.
 *
 * @example
 * ```ts
 * const before = countOpenHandles();
 * await agent.ask('hello');
 * expect(await newOpenHandles(before)).toEqual([]);
 * ```
 */
export function countOpenHandles(): Map<string, number> {
  trackTimers();
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  snapshotOrder.set(counts, timersMade);
  return counts;
}

/**
 * The handles open now that were not open at `before` (one entry per extra handle): a timer as
 * `Timeout (made at <where setTimeout was called>)`, other handles by kind. Timers the test
 * runner makes for itself are not counted. Waits one turn of the event loop first, so handles
 * closed by pending callbacks are not counted.
 */
export async function newOpenHandles(before: Map<string, number>): Promise<string[]> {
  await new Promise((resolve) => setImmediate(resolve));
  const extra: string[] = [];
  for (const [kind, count] of countOpenHandles()) {
    if (kind === 'Timeout') continue;
    for (let index = before.get(kind) ?? 0; index < count; index += 1) extra.push(kind);
  }
  const madeBefore = snapshotOrder.get(before) ?? 0;
  for (const { order, site, timer } of liveTimers.values()) {
    if (order > madeBefore && timer.hasRef()) extra.push(`Timeout (made at ${site})`);
  }
  return extra;
}
