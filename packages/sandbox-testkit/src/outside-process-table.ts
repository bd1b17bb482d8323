import { execFile } from 'node:child_process';

/** `ps(1)` by absolute path: `/bin/ps` on macOS and on Linux (procps). */
export const psPath = '/bin/ps';

/**
 * The listing's arguments. Every keyword is one BSD `ps` (macOS) and procps `ps` (Linux) both
 * accept with an empty header, and none is an alias (BSD's `stat` is one of `state`, and older BSD
 * code refuses a header on an alias). `-ww` asks for unlimited width, so a long command line is
 * never cut before the marker at its end. `command` comes last: it holds spaces.
 */
const processTableArguments = ['-A', '-ww', '-o', 'pid=,ppid=,pgid=,uid=,state=,command='] as const;

/** How long one listing may take before it counts as failed (a machine under heavy load). */
const listingTimeoutMilliseconds = 10_000;

/** The largest listing read: enough for hundreds of thousands of processes. */
const largestListingBytes = 64 * 1024 * 1024;

/** One process of the machine outside the sandbox as `ps` reports it. */
export interface OutsideProcess {
  readonly pid: number;
  readonly parentPid: number;
  readonly groupId: number;
  /** The effective uid. */
  readonly userId: number;
  /** A zombie has exited and runs nothing; it waits for its parent to reap it. */
  readonly isZombie: boolean;
  /**
   * The arguments joined by spaces. A process of another user may show only its name (macOS
   * puts it in parentheses, procps in brackets for kernel threads).
   */
  readonly command: string;
}

/**
 * Every process outside the sandbox, from `ps -A -ww -o pid=,ppid=,pgid=,uid=,state=,command=`. It runs
 * the same on macOS, which has no `/proc`, and on Linux, so the suite's outside view of a
 * sandbox's processes does not depend on the platform. Rejects, naming `ps`, when it cannot run.
 */
export function listOutsideProcesses(ps: string = psPath): Promise<OutsideProcess[]> {
  return new Promise((resolve, reject) => {
    execFile(
      ps,
      processTableArguments,
      // No COLUMNS or locale from the parent: the output's width and digits stay plain.
      { env: {}, timeout: listingTimeoutMilliseconds, maxBuffer: largestListingBytes },
      (error, stdout) => {
        if (error === null) {
          resolve(parseProcessTable(stdout));
          return;
        }
        reject(
          new Error(
            `The testkit lists the processes of this machine with ${ps} (${processTableArguments.join(' ')}), and it failed: ${error.message}. Install ps (procps on Linux) to run the suite.`,
            { cause: error },
          ),
        );
      },
    );
  });
}

/** The shape of one line: five numbers-and-state fields, then the command (possibly empty). */
const linePattern = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\S+)(?:\s(.*))?$/;

/**
 * Reads the listing of {@link listOutsideProcesses}. A line of another shape (a header, a warning)
 * is skipped rather than guessed at.
 */
export function parseProcessTable(text: string): OutsideProcess[] {
  const processes: OutsideProcess[] = [];
  for (const line of text.split('\n')) {
    const match = linePattern.exec(line);
    if (match === null) continue;
    const [, pid, parentPid, groupId, userId, state, command] = match;
    const numbers = [pid, parentPid, groupId, userId].map(Number);
    if (!numbers.every(Number.isSafeInteger)) continue;
    processes.push({
      pid: numbers[0] as number,
      parentPid: numbers[1] as number,
      groupId: numbers[2] as number,
      userId: numbers[3] as number,
      isZombie: (state ?? '').startsWith('Z'),
      command: (command ?? '').trim(),
    });
  }
  return processes;
}
