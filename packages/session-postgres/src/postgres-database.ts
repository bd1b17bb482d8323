import { GhostError } from '@ghost/core';
import { SessionStoreError } from '@ghost/core/session-store';
import type pg from 'pg';

/** A row as the store reads it: every value as PostgreSQL's text, or null. */
export type TextRow = Readonly<Record<string, string | null>>;

/** What a statement gave back. */
export interface StatementResult {
  readonly rows: readonly TextRow[];
  readonly rowCount: number;
}

/** Runs statements on one connection: the pool's, or a transaction's. */
export interface Statements {
  run(text: string, values?: readonly unknown[]): Promise<StatementResult>;
}

// Every value comes back as text, whatever type parsers the application set on its `pg`
// (say, bigint as BigInt or timestamps as strings): the store parses what it reads itself.
const textTypes = { getTypeParser: () => (value: string) => value };

/** The store's name, in every error it throws. */
export const storeName = 'postgres';

// SQLSTATEs that say the tables are not what this release made: a table or column missing, or
// a table in the way.
const schemaStates = new Set(['42P01', '42703', '42P07', '42804']);

/**
 * A driver's failure as the store's error: Ghost's own errors (thrown by the store's checks inside a
 * transaction) pass through; a missing table or column is `schema`; anything else (the server down,
 * the connection lost, a timeout) is `unavailable`.
 */
export function storeFailure(error: unknown, doing: string, sessionId?: string): Error {
  if (GhostError.isInstance(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  const session = sessionId === undefined ? {} : { sessionId };
  if (typeof code === 'string' && schemaStates.has(code)) {
    return new SessionStoreError(
      `Session store '${storeName}' found tables it did not expect while ${doing}: ${message}. The schema's ghost_ tables were changed outside @ghost/session-postgres; restore them, or use another schema.`,
      { store: storeName, reason: 'schema', cause: error, ...session },
    );
  }
  return new SessionStoreError(
    `Session store '${storeName}' failed while ${doing}: ${message}. Nothing was written half-way; check that PostgreSQL is running and reachable with the store's connection settings, then retry.`,
    { store: storeName, reason: 'unavailable', cause: error, ...session },
  );
}

function isGhostError(error: unknown): boolean {
  return GhostError.isInstance(error);
}

/** Runs one statement on a pool or a connection, reading every value as text. */
export async function runOn(
  target: pg.Pool | pg.PoolClient,
  text: string,
  values: readonly unknown[],
): Promise<StatementResult> {
  const result = await target.query<TextRow>({ text, values: [...values], types: textTypes });
  return { rows: result.rows, rowCount: result.rowCount ?? 0 };
}

/**
 * The store's view of its pool: single statements, transactions (rolled back on any error, the
 * connection dropped when it broke), and a dedicated connection. Every driver failure comes out as a
 * `SessionStoreError` naming the store.
 */
export class PostgresDatabase {
  readonly pool: pg.Pool;
  /** Whether the store made the pool (and so ends it on close). */
  readonly isPoolOwned: boolean;

  constructor(pool: pg.Pool, isPoolOwned: boolean) {
    this.pool = pool;
    this.isPoolOwned = isPoolOwned;
  }

  /** One statement on any pooled connection. */
  async run(text: string, values: readonly unknown[], doing: string, sessionId?: string) {
    try {
      return await runOn(this.pool, text, values);
    } catch (error) {
      throw storeFailure(error, doing, sessionId);
    }
  }

  /**
   * Runs `work` in one transaction: committed when it resolves, rolled back when it throws (the
   * error passes through, as a `SessionStoreError` if it came from the driver).
   */
  async transaction<Result>(
    doing: string,
    sessionId: string | undefined,
    work: (statements: Statements) => Promise<Result>,
  ): Promise<Result> {
    const client = await this.connect(doing, sessionId);
    let broken: unknown;
    // A connection that dies between two statements says so with an 'error' event, which would
    // crash the process without a listener; the next statement fails too, and that is reported.
    const onError = (error: unknown) => {
      broken ??= error;
    };
    client.on('error', onError);
    const statements: Statements = { run: (text, values = []) => runOn(client, text, values) };
    try {
      await statements.run('BEGIN');
      const result = await work(statements);
      await statements.run('COMMIT');
      return result;
    } catch (error) {
      if (broken === undefined && (isGhostError(error) || !isConnectionError(error))) {
        await client.query('ROLLBACK').catch((rollbackError: unknown) => {
          broken ??= rollbackError;
        });
      } else {
        broken ??= error;
      }
      throw storeFailure(error, doing, sessionId);
    } finally {
      client.removeListener('error', onError);
      // A connection that failed is closed rather than handed to the next caller.
      client.release(broken === undefined ? undefined : toError(broken));
    }
  }

  /** A connection of the pool, for the caller to release. */
  async connect(doing: string, sessionId?: string): Promise<pg.PoolClient> {
    try {
      return await this.pool.connect();
    } catch (error) {
      throw storeFailure(error, doing, sessionId);
    }
  }
}

function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  // A statement the server refused (a SQLSTATE of five characters, not class 08 or 57) leaves the
  // connection usable; anything else (a socket error, a terminated connection) does not.
  return !(typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !/^(08|57)/.test(code));
}

function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
