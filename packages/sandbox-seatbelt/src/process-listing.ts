import { execFile } from 'node:child_process';

/** `ps(1)`, by absolute path: at `/bin/ps` on macOS and on the Linux machines that run the tests. */
export const psPath = '/bin/ps';

/** How long one listing may take before it counts as failed (a machine under heavy load). */
const listingTimeoutMilliseconds = 5_000;

/** The largest listing read: enough for hundreds of thousands of processes. */
const largestListingBytes = 64 * 1024 * 1024;

/** One process as `ps` reports it. */
export interface ListedProcess {
  readonly pid: number;
  readonly parentPid: number;
  readonly groupId: number;
  /** Resident memory, in bytes. */
  readonly residentBytes: number;
  /** A zombie has exited and runs nothing; it waits for its parent to reap it. */
  readonly isZombie: boolean;
}

/**
 * Every process on the machine with its parent, process group, resident size and state, from
 * `ps -A -o pid=,ppid=,pgid=,rss=,stat=`, which BSD `ps` (macOS) and procps `ps` (Linux) read
 * alike; `rss` is in KiB on both. macOS has no `/proc`, so this is how the parent sees the tree.
 * Rejects when `ps` cannot run or fails, or when `signal` aborts it (which kills it).
 */
export function listProcesses(ps: string = psPath, signal?: AbortSignal): Promise<ListedProcess[]> {
  return new Promise((resolve, reject) => {
    execFile(
      ps,
      ['-A', '-o', 'pid=,ppid=,pgid=,rss=,stat='],
      {
        env: {},
        timeout: listingTimeoutMilliseconds,
        maxBuffer: largestListingBytes,
        ...(signal === undefined ? {} : { signal }),
      },
      (error, stdout) => {
        if (error !== null) reject(error);
        else resolve(parseListing(stdout));
      },
    );
  });
}

/** Reads `ps`'s lines; a line that is not five fields of the expected shape is skipped. */
export function parseListing(text: string): ListedProcess[] {
  const processes: ListedProcess[] = [];
  for (const line of text.split('\n')) {
    const fields = line.trim().split(/\s+/);
    if (fields.length !== 5) continue;
    const [pid, parentPid, groupId, residentKibibytes] = fields.slice(0, 4).map(Number) as [
      number,
      number,
      number,
      number,
    ];
    if (![pid, parentPid, groupId, residentKibibytes].every(Number.isSafeInteger)) continue;
    processes.push({
      pid,
      parentPid,
      groupId,
      residentBytes: residentKibibytes * 1024,
      isZombie: fields[4]!.startsWith('Z'),
    });
  }
  return processes;
}
