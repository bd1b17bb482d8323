import { isAbsolute, resolve } from 'node:path';
import { ConfigurationError } from '@ghost/core';
import { defaultSessionLimits, type SessionLimits } from '@ghost/core/session-store';

/** The options of `sqliteSessionStore`. */
export interface SqliteSessionStoreOptions {
  /**
   * The database file, such as `./data/sessions.db`: created (private to its owner, folder
   * included) when missing. Every process that opens the same file shares its sessions and locks.
   */
  readonly path: string;
  /** What one session may hold, over `defaultSessionLimits` key by key. */
  readonly limits?: Partial<SessionLimits>;
  /**
   * How long a run's hold on a session lasts without renewal, in milliseconds (default 30,000). An
   * open session renews it every third of that; a crashed holder on this machine is taken over at
   * once, any other only once its lease expires.
   */
  readonly leaseMs?: number;
  /**
   * How long a statement waits for another process's write to the file to finish, in milliseconds
   * (default 5,000), before failing with a `SessionStoreError`. The wait blocks this thread.
   */
  readonly busyTimeoutMs?: number;
}

/** The options, checked, with their defaults. */
export interface CheckedSqliteSessionStoreOptions {
  /** Absolute. */
  readonly path: string;
  readonly limits: SessionLimits;
  readonly leaseMs: number;
  readonly busyTimeoutMs: number;
}

const optionKeys = ['path', 'limits', 'leaseMs', 'busyTimeoutMs'];
const limitKeys = Object.keys(defaultSessionLimits) as (keyof SessionLimits)[];

/** How long a lease lasts unless told otherwise. */
const defaultLeaseMs = 30_000;
/** How long a statement waits for another process's write unless told otherwise. */
const defaultBusyTimeoutMs = 5_000;

function invalid(option: string, message: string): ConfigurationError {
  return new ConfigurationError(message, { code: 'SESSION_OPTION_INVALID', option });
}

function checkKeys(value: object, known: readonly string[], where: string): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) {
      throw new ConfigurationError(`${where} has no option '${key}'. Known options: ${known.join(', ')}.`, {
        code: 'OPTION_UNKNOWN',
        option: key,
        known: [...known],
      });
    }
  }
}

function wholeNumber(value: unknown, option: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw invalid(
      option,
      `sqliteSessionStore()'s ${option} must be a whole number from ${min} to ${max}, got ${String(value)}.`,
    );
  }
  return value;
}

/** Checks `sqliteSessionStore`'s options; throws a `ConfigurationError` naming the one that is wrong. */
export function checkSqliteSessionStoreOptions(
  options: SqliteSessionStoreOptions,
): CheckedSqliteSessionStoreOptions {
  if (typeof options !== 'object' || options === null) {
    throw invalid('options', "sqliteSessionStore() takes { path }, such as { path: './data/sessions.db' }.");
  }
  checkKeys(options, optionKeys, 'sqliteSessionStore()');
  const { path, limits = {}, leaseMs = defaultLeaseMs, busyTimeoutMs = defaultBusyTimeoutMs } = options;
  if (typeof path !== 'string' || path.length === 0 || path.includes('\0')) {
    throw invalid('path', "sqliteSessionStore()'s path must be a file path, such as './data/sessions.db'.");
  }
  if (path === ':memory:' || /^file:/i.test(path)) {
    throw invalid(
      'path',
      `sqliteSessionStore()'s path is a file path, not ${path === ':memory:' ? "':memory:'" : 'a URL'}: give './data/sessions.db', or use memorySessionStore() from @ghost/core to keep sessions in memory.`,
    );
  }
  if (typeof limits !== 'object' || limits === null) {
    throw invalid(
      'limits',
      "sqliteSessionStore()'s limits must be an object, such as { maxMessages: 5000 }.",
    );
  }
  checkKeys(limits, limitKeys, "sqliteSessionStore()'s limits");
  const checkedLimits = { ...defaultSessionLimits };
  for (const key of limitKeys) {
    const value = limits[key];
    if (value !== undefined)
      checkedLimits[key] = wholeNumber(value, `limits.${key}`, 1, Number.MAX_SAFE_INTEGER);
  }
  return {
    path: isAbsolute(path) ? path : resolve(path),
    limits: Object.freeze(checkedLimits),
    leaseMs: wholeNumber(leaseMs, 'leaseMs', 100, 24 * 60 * 60 * 1000),
    busyTimeoutMs: wholeNumber(busyTimeoutMs, 'busyTimeoutMs', 0, 10 * 60 * 1000),
  };
}
