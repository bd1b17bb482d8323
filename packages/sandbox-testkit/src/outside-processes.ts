import { readdir, readFile } from 'node:fs/promises';
import { listOutsideProcesses, type OutsideProcess } from './outside-process-table.js';

/**
 * The live processes outside the sandbox whose command line contains `marker`, listed by `ps` (on every
 * platform: macOS has no /proc). A pid inside a sandbox's PID namespace differs from its outside
 * pid, so probes put a unique marker in their arguments and the suite finds them by it. Zombies
 * are left out: they run nothing.
 */
export async function markedProcesses(marker: string): Promise<OutsideProcess[]> {
  return (await listOutsideProcesses()).filter(
    (listed) => !listed.isZombie && listed.pid !== process.pid && listed.command.includes(marker),
  );
}

/** The outside pids of the live processes carrying `marker` (see {@link markedProcesses}). */
export async function processesWithMarker(marker: string): Promise<number[]> {
  return (await markedProcesses(marker)).map((listed) => listed.pid);
}

/**
 * Kills, from outside the sandbox, every process still carrying `marker`: the suite's own cleanup after a
 * case, so a backend that leaks processes fails its case without leaving them running.
 */
export async function killProcessesWithMarker(marker: string): Promise<void> {
  for (const pid of await processesWithMarker(marker)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone, or not ours to kill.
    }
  }
}

/**
 * Counts the marked processes every 50 ms until `during` settles, and once more after: the most
 * that ran at once, for checking a process limit from outside the sandbox. On Linux it reads /proc,
 * which takes a fraction of a `ps` run under load, so it samples more often and misses fewer
 * peaks; elsewhere it lists with `ps`.
 */
export async function peakProcessCount<Result>(
  marker: string,
  during: Promise<Result>,
): Promise<{ result: Result; peak: number }> {
  const count =
    process.platform === 'linux'
      ? async () => (await processesWithMarkerInProc(marker)).length
      : async () => (await processesWithMarker(marker)).length;
  let isSettled = false;
  const settled = during.finally(() => {
    isSettled = true;
  });
  // Observed below; this keeps an early rejection from being reported as unhandled meanwhile.
  settled.catch(() => {});
  let peak = 0;
  do {
    peak = Math.max(peak, await count());
    await new Promise((resolve) => setTimeout(resolve, 50));
  } while (!isSettled);
  peak = Math.max(peak, await count());
  return { result: await settled, peak };
}

/** The live processes carrying `marker`, read from Linux's /proc/<pid>/cmdline and stat. */
async function processesWithMarkerInProc(marker: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const commandLine = await readFile(`/proc/${entry}/cmdline`, 'utf8');
      if (!commandLine.includes(marker)) continue;
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      // The command name in parentheses may contain spaces: the state follows the last ')'.
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state !== 'Z' && state !== 'X') found.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}
