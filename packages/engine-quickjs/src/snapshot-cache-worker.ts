// The child that builds the QuickJS host's cached startup snapshot in the background
// (`buildCachedHostSnapshotInBackground` starts it: `node snapshot-cache-worker.js <folder>`).
// It ends on its own: when the build is published, when it fails (recorded beside the entry),
// at its deadline, or on a signal; in each case its Node processes are killed and its temporary
// entry removed.
import { backgroundBuildDeadlineMs, buildCachedHostSnapshot } from './host-snapshot-cache.js';

const [directory, deadlineText] = process.argv.slice(2);
const deadlineMs = deadlineText === undefined ? backgroundBuildDeadlineMs : Number(deadlineText);
const controller = new AbortController();
const deadline = setTimeout(
  () => controller.abort(new Error(`the build took longer than ${deadlineMs} ms`)),
  deadlineMs,
);
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
  process.once(signal, () => controller.abort(new Error(`stopped by ${signal}`)));
}

try {
  if (directory === undefined)
    throw new Error('Usage: snapshot-cache-worker.js <cache folder> [deadline ms]');
  await buildCachedHostSnapshot(directory, { signal: controller.signal });
} catch {
  // Recorded in the cache folder; the processes that wanted it start hosts from the script.
  process.exitCode = 1;
} finally {
  clearTimeout(deadline);
}
