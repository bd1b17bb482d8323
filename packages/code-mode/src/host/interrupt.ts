import type { HostLimits } from '../shared/protocol.js';

/** Why an engine's watchdog stopped a program: asked to, or over one of its limits. */
export type InterruptReason = 'stop' | 'memory' | 'cpu' | 'wall';

/**
 * The error a program reports when the engine stopped it, naming the limit it crossed, so every
 * engine tells the model the same thing.
 *
 * @example
 * ```ts
 * if (reason !== undefined) return { status: 'error', error: formatInterrupt(reason, limits) };
 * ```
 */
export function formatInterrupt(reason: InterruptReason, limits: HostLimits): string {
  switch (reason) {
    case 'stop':
      return 'The program was stopped.';
    case 'memory':
      return `The program used more than its memory limit of ${limits.memoryBytes} bytes (limits.memoryBytes) and was stopped.`;
    case 'cpu':
      return `The program used more than its CPU limit of ${limits.cpuSeconds} s (limits.cpuSeconds) and was stopped.`;
    case 'wall':
      return `The program ran longer than its time limit of ${limits.wallSeconds} s (limits.wallSeconds) and was stopped.`;
  }
}
