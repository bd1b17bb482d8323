import { CodeModeConfigurationError } from './errors.js';
import { formatBytes } from './shared/head-and-tail.js';

/** The limits of code mode. Every one is configurable; unknown keys are rejected. */
export interface CodeModeLimits {
  /** Bytes of program source; checked in the parent before anything starts. Default 1,000,000. */
  readonly sourceBytes: number;
  /**
   * Bytes a program gives back to the model, each of: its output (`text()`, `console.*`; beyond
   * the limit the head and the tail are kept, with a note of how much was cut), its value (the
   * JSON of a larger value turns the result into an error that names its size), and its error
   * message (head and tail kept). Enforced by the host and again by the parent. Default
   * 1,000,000; at most 32 MiB, so every frame stays under the protocol's 64 MiB cap.
   */
  readonly outputBytes: number;
  /** Memory of the engine, in bytes. Default 64 MiB. */
  readonly memoryBytes: number;
  /** CPU time of one program, in seconds. Default 10. */
  readonly cpuSeconds: number;
  /** Total lifetime of one program from `exec`, in seconds; `wait` does not extend it. Default 3,600. */
  readonly wallSeconds: number;
  /** The largest file a program may write, in bytes (enforced by sandboxes that can). Default 1,000,000. */
  readonly fileBytes: number;
  /** Programs one session (one run) may start. Default 16. */
  readonly programs: number;
  /** Tool calls one program may make, on top of the agent's shared `maxToolCalls`. Default 1,000. */
  readonly toolCalls: number;
  /**
   * Bytes of one tool result's JSON (or of its error message), checked in the parent before the
   * result is sent to the program: a larger result is not sent, and the call rejects in the
   * program with an error that names the size and the limit. Default 4 MiB (4,194,304); at most
   * 32 MiB.
   */
  readonly resultBytes: number;
  /** Tool calls of one program in flight at once; more wait in a queue. Default 8. */
  readonly concurrency: number;
  /** Seconds that closing a session may take before it fails with a `CleanupError`. Default 5. */
  readonly cleanupSeconds: number;
}

/** The default limits. */
export const defaultCodeModeLimits: CodeModeLimits = Object.freeze({
  sourceBytes: 1_000_000,
  outputBytes: 1_000_000,
  memoryBytes: 64 * 1024 * 1024,
  cpuSeconds: 10,
  wallSeconds: 3_600,
  fileBytes: 1_000_000,
  programs: 16,
  toolCalls: 1_000,
  resultBytes: 4 * 1024 * 1024,
  concurrency: 8,
  cleanupSeconds: 5,
});

const limitNames = Object.keys(defaultCodeModeLimits) as (keyof CodeModeLimits)[];
// What crosses the protocol in one frame must fit its 64 MiB cap with room to spare.
const limitMaximums: Partial<Record<keyof CodeModeLimits, number>> = {
  outputBytes: 32 * 1024 * 1024,
  resultBytes: 32 * 1024 * 1024,
};

// Fractions of a second are fine for time limits; counts and sizes are whole numbers.
const fractionalLimits = new Set<keyof CodeModeLimits>(['cpuSeconds', 'wallSeconds', 'cleanupSeconds']);

/**
 * Checks partial limits: every key must be a known limit with a positive number. Throws a
 * {@link CodeModeConfigurationError} that names the offending key.
 */
export function checkCodeModeLimits(limits: unknown, where: string): Partial<CodeModeLimits> {
  if (limits === undefined) return {};
  if (typeof limits !== 'object' || limits === null || Array.isArray(limits)) {
    throw new CodeModeConfigurationError(`${where}: limits must be an object such as { wallSeconds: 900 }.`);
  }
  for (const [key, value] of Object.entries(limits)) {
    if (!(limitNames as string[]).includes(key)) {
      throw new CodeModeConfigurationError(
        `${where}: code mode has no limit '${key}'. Known limits: ${limitNames.join(', ')}.`,
        { code: 'CODE_MODE_LIMIT_UNKNOWN', limit: key },
      );
    }
    const isWhole = !fractionalLimits.has(key as keyof CodeModeLimits);
    if (
      typeof value !== 'number' ||
      !Number.isFinite(value) ||
      value <= 0 ||
      (isWhole && !Number.isInteger(value))
    ) {
      throw new CodeModeConfigurationError(
        `${where}: limits.${key} is ${String(value)}; use a ${isWhole ? 'whole number' : 'number'} greater than 0.`,
        { code: 'CODE_MODE_LIMIT_INVALID', limit: key },
      );
    }
    const maximum = limitMaximums[key as keyof CodeModeLimits];
    if (maximum !== undefined && value > maximum) {
      throw new CodeModeConfigurationError(
        `${where}: limits.${key} is ${formatBytes(value)}; it can be at most ${formatBytes(maximum)} (32 MiB), which keeps every protocol frame under its 64 MiB cap.`,
        { code: 'CODE_MODE_LIMIT_INVALID', limit: key, maximum },
      );
    }
  }
  return limits as Partial<CodeModeLimits>;
}

/** The defaults, overridden key by key by each layer in order (runtime settings, then the agent's). */
export function resolveCodeModeLimits(...layers: readonly Partial<CodeModeLimits>[]): CodeModeLimits {
  return Object.freeze(Object.assign({}, defaultCodeModeLimits, ...layers));
}
