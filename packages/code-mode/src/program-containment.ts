import type { EngineInstructionsContext } from './engine.js';

/**
 * What the instructions of every language say about where a program runs: only what the
 * sandbox really enforces here, then the limits that hold.
 */
export function formatContainment({ sandbox, limits }: EngineInstructionsContext): string {
  const { capabilities } = sandbox;
  const enforced: string[] = [];
  if (capabilities.filesystemIsolation) enforced.push('no filesystem outside a private temporary directory');
  if (capabilities.networkIsolation) enforced.push('no network');
  if (capabilities.subprocessDenial) enforced.push('no subprocesses');
  const os =
    enforced.length > 0
      ? `The program runs in the '${sandbox.name}' sandbox: ${enforced.join(', ')}.`
      : `The program runs with no operating-system sandbox ('${sandbox.name}').`;
  return `${os} It may use about ${Math.round(limits.memoryBytes / 1024 / 1024)} MiB of memory and ${limits.cpuSeconds} s of CPU, and make ${limits.toolCalls} tool calls, at most ${limits.concurrency} at a time (more wait their turn).`;
}
