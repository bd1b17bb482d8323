import { CodeModeConfigurationError } from './errors.js';

/** The limits of code mode (DESIGN §4). Every one is configurable; unknown keys are rejected. */
export interface CodeModeLimits {
  /** Bytes of program source; checked in the parent before anything starts. Default 1,000,000. */
  readonly sourceBytes: number;
  /** Bytes of output per program; beyond it the head and the tail are kept. Default 1,000,000. */
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
  concurrency: 8,
  cleanupSeconds: 5,
});

const limitNames = Object.keys(defaultCodeModeLimits) as (keyof CodeModeLimits)[];
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
        { code: 'CODE_MODE_LIMIT_UNKNOWN', details: { limit: key } },
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
        { code: 'CODE_MODE_LIMIT_INVALID', details: { limit: key } },
      );
    }
  }
  return limits as Partial<CodeModeLimits>;
}

/** The defaults, overridden key by key by each layer in order (runtime settings, then the agent's). */
export function resolveCodeModeLimits(...layers: readonly Partial<CodeModeLimits>[]): CodeModeLimits {
  return Object.freeze(Object.assign({}, defaultCodeModeLimits, ...layers));
}
