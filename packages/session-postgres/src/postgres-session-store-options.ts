import { ConfigurationError } from '@ghost/core';
import type { SessionLimits } from '@ghost/core/session-store';
import type pg from 'pg';

/**
 * Where the store's PostgreSQL is: a connection string (the store makes a pool of its own and ends it
 * on `close()`), or the application's own `pg` pool (which `close()` leaves open).
 */
export type PostgresSessionConnection =
  | {
      /** Such as `postgresql://user:password@db.internal:5432/app`. */
      readonly connectionString: string;
      /** Connections of the store's pool, one of them kept for its presence. Default 10. */
      readonly poolSize?: number;
      /** How long to wait for a connection before failing with `SessionStoreError`. Default 5,000. */
      readonly connectionTimeoutMs?: number;
      /** How long to wait for one statement's answer before failing. Default 60,000. */
      readonly statementTimeoutMs?: number;
    }
  | {
      /**
       * Your `pg` pool. The store keeps one of its connections while open, so give it at least 2;
       * set its `connectionTimeoutMillis`, or a run waits forever for a connection when the server
       * is down. Close the store before ending the pool.
       */
      readonly pool: pg.Pool;
    };

/** The options of `postgresSessionStore`. */
export interface PostgresSessionStoreOptions {
  /**
   * The schema holding the store's `ghost_` tables, created if missing: lowercase letters, digits and
   * `_`, up to 63. Default `public`.
   */
  readonly schema?: string;
  /** What one session may hold, over `defaultSessionLimits` key by key. */
  readonly limits?: Partial<SessionLimits>;
  /**
   * How long a run's hold on a session lasts unless renewed (the store renews it every third of
   * this). It bounds how long a session stays blocked after its holder's machine is lost; a holder
   * whose process dies frees it at once. Default 30,000; at least 300.
   */
  readonly leaseMs?: number;
}

/** The options, checked. */
export interface CheckedPostgresStoreOptions {
  readonly schema: string;
  readonly limits: Partial<SessionLimits>;
  readonly leaseMs: number;
}

const optionKeys = ['schema', 'limits', 'leaseMs'];
const connectionKeys = ['connectionString', 'poolSize', 'connectionTimeoutMs', 'statementTimeoutMs', 'pool'];
const schemaPattern = /^[a-z_][a-z0-9_]{0,62}$/;

function invalid(message: string, option: string): ConfigurationError {
  return new ConfigurationError(message, { code: 'SESSION_OPTION_INVALID', option });
}

function refuseUnknownKeys(value: object, known: readonly string[], where: string): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) {
      throw new ConfigurationError(
        `postgresSessionStore()'s ${where} has no option '${key}'. Known options: ${known.join(', ')}.`,
        { code: 'OPTION_UNKNOWN', option: key, known },
      );
    }
  }
}

function positiveWhole(value: unknown, option: string, least: number): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < least) {
    throw invalid(
      `postgresSessionStore()'s ${option} must be a whole number of at least ${least}, got ${String(value)}.`,
      option,
    );
  }
  return value;
}

/** The connection, checked: exactly one of `connectionString` and `pool`. */
export function checkPostgresConnection(connection: PostgresSessionConnection): PostgresSessionConnection {
  if (typeof connection !== 'object' || connection === null) {
    throw invalid(
      'postgresSessionStore() takes { connectionString } or { pool } first, such as { connectionString: process.env.DATABASE_URL }.',
      'connection',
    );
  }
  refuseUnknownKeys(connection, connectionKeys, 'connection');
  const { connectionString, pool } = connection as { connectionString?: unknown; pool?: unknown };
  if ((connectionString === undefined) === (pool === undefined)) {
    throw invalid(
      'postgresSessionStore() takes either a connectionString or a pool, not both or neither.',
      'connection',
    );
  }
  if (pool !== undefined) {
    if (
      typeof pool !== 'object' ||
      pool === null ||
      typeof (pool as { connect?: unknown }).connect !== 'function'
    ) {
      throw invalid("postgresSessionStore()'s pool must be a pg Pool (new pg.Pool({ ... })).", 'pool');
    }
    for (const key of ['poolSize', 'connectionTimeoutMs', 'statementTimeoutMs']) {
      if (key in connection) throw invalid(`${key} is set on your own pool, not beside it.`, key);
    }
    return connection;
  }
  if (typeof connectionString !== 'string' || connectionString.trim() === '') {
    throw invalid(
      "postgresSessionStore()'s connectionString must be a non-empty string.",
      'connectionString',
    );
  }
  const checked = connection as Extract<PostgresSessionConnection, { connectionString: string }>;
  positiveWhole(checked.poolSize, 'poolSize', 2);
  positiveWhole(checked.connectionTimeoutMs, 'connectionTimeoutMs', 1);
  positiveWhole(checked.statementTimeoutMs, 'statementTimeoutMs', 1);
  return connection;
}

/** The options, checked, with their defaults. */
export function checkPostgresStoreOptions(options: PostgresSessionStoreOptions): CheckedPostgresStoreOptions {
  if (typeof options !== 'object' || options === null) {
    throw invalid(
      'postgresSessionStore() takes its options as an object: { schema, limits, leaseMs }.',
      'options',
    );
  }
  refuseUnknownKeys(options, optionKeys, 'options');
  const schema = options.schema ?? 'public';
  if (typeof schema !== 'string' || !schemaPattern.test(schema)) {
    throw invalid(
      `postgresSessionStore()'s schema must be 1 to 63 lowercase letters, digits and _, not starting with a digit; got ${JSON.stringify(schema)}.`,
      'schema',
    );
  }
  return {
    schema,
    limits: options.limits ?? {},
    leaseMs: positiveWhole(options.leaseMs, 'leaseMs', 300) ?? 30_000,
  };
}
