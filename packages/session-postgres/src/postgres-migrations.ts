import { SessionStoreError } from '@ghost/core/session-store';
import { type PostgresDatabase, type Statements, storeName } from './postgres-database.js';

/** The store's tables in one schema, as SQL names (the schema quoted; checked to be an identifier). */
export interface GhostTables {
  readonly schema: string;
  readonly migrations: string;
  readonly sessions: string;
  readonly messages: string;
  readonly operations: string;
  readonly locks: string;
}

const tableNames = [
  'ghost_migrations',
  'ghost_sessions',
  'ghost_session_messages',
  'ghost_session_operations',
  'ghost_session_locks',
] as const;

/** The tables of `schema` (a name `checkPostgresStoreOptions` accepted). */
export function ghostTables(schema: string): GhostTables {
  const quoted = `"${schema}"`;
  return {
    schema,
    migrations: `${quoted}.ghost_migrations`,
    sessions: `${quoted}.ghost_sessions`,
    messages: `${quoted}.ghost_session_messages`,
    operations: `${quoted}.ghost_session_operations`,
    locks: `${quoted}.ghost_session_locks`,
  };
}

interface Migration {
  readonly version: number;
  readonly name: string;
  readonly statements: (tables: GhostTables) => readonly string[];
}

/**
 * Every schema change, in order; a release adds migrations at the end and never edits one that
 * shipped. A store refuses a schema whose version is past the last one here.
 */
const migrations: readonly Migration[] = [
  {
    version: 1,
    name: 'sessions, messages, operations and leases',
    statements: (tables) => [
      `CREATE TABLE ${tables.sessions} (
        sequence bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id text NOT NULL UNIQUE,
        actor text NOT NULL,
        state text NOT NULL DEFAULT '{}',
        message_count integer NOT NULL DEFAULT 0,
        byte_count bigint NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`,
      // list(): an actor's sessions, newest first, a page at a time.
      `CREATE INDEX ghost_sessions_by_actor ON ${tables.sessions} (actor, sequence DESC)`,
      // prune(): sessions last written before a date.
      `CREATE INDEX ghost_sessions_by_update ON ${tables.sessions} (updated_at)`,
      // The primary key is the history window's index: the newest rows before a position.
      `CREATE TABLE ${tables.messages} (
        session_sequence bigint NOT NULL REFERENCES ${tables.sessions} (sequence) ON DELETE CASCADE,
        position integer NOT NULL,
        message text NOT NULL,
        bytes integer NOT NULL,
        operation_id text NOT NULL,
        outcome text,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (session_sequence, position)
      )`,
      `CREATE TABLE ${tables.operations} (
        session_sequence bigint NOT NULL REFERENCES ${tables.sessions} (sequence) ON DELETE CASCADE,
        operation_id text NOT NULL,
        digest text NOT NULL,
        PRIMARY KEY (session_sequence, operation_id)
      )`,
      // One row per held session (see docs/decisions/2026-12-05-postgres-session-store.md).
      `CREATE TABLE ${tables.locks} (
        session_id text PRIMARY KEY,
        holder uuid NOT NULL,
        presence integer,
        expires_at timestamptz NOT NULL
      )`,
    ],
  },
  {
    version: 2,
    name: 'paused runs',
    // The paused run kept with a session (SessionWrite.pause): JSON text, NULL when there is none.
    statements: (tables) => [`ALTER TABLE ${tables.sessions} ADD COLUMN pause text`],
  },
];

/** The schema version this release writes. */
const schemaVersion = migrations.length;

// Advisory lock keys (two-int form) in a space of Ghost's own: 'GHSM', and hashtext(schema).
const migrationLockSpace = 0x4748534d;

function newerSchemaError(found: number, schema: string): SessionStoreError {
  return new SessionStoreError(
    `Session store '${storeName}' found schema '${schema}' at version ${found}, written by a newer @ghost/session-postgres (this one knows versions up to ${schemaVersion}). Nothing was changed; upgrade @ghost/session-postgres in this application.`,
    { store: storeName, reason: 'schema' },
  );
}

function foreignSchemaError(schema: string, detail: string): SessionStoreError {
  return new SessionStoreError(
    `Session store '${storeName}' cannot use schema '${schema}': ${detail}. Nothing was changed; drop or rename those tables, or give the store another schema.`,
    { store: storeName, reason: 'schema' },
  );
}

/** The applied version, or `undefined` when the migrations table is not there. */
async function appliedVersion(statements: Statements, tables: GhostTables): Promise<number | undefined> {
  const found = await statements.run('SELECT to_regclass($1) IS NOT NULL AS present', [tables.migrations]);
  if (found.rows[0]?.present !== 't') return undefined;
  let rows: StatementRows;
  try {
    rows = (
      await statements.run(`SELECT max(version) AS version, count(name) AS named FROM ${tables.migrations}`)
    ).rows;
  } catch (error) {
    if ((error as { code?: unknown }).code === '42703') {
      throw foreignSchemaError(tables.schema, 'its table ghost_migrations was not made by Ghost');
    }
    throw error;
  }
  const version = Number(rows[0]?.version ?? 0);
  if (!Number.isSafeInteger(version) || version < 0) {
    throw foreignSchemaError(tables.schema, 'its table ghost_migrations holds no version Ghost wrote');
  }
  return version;
}

type StatementRows = Awaited<ReturnType<Statements['run']>>['rows'];

/**
 * Brings the schema's tables to {@link schemaVersion}: checks without a lock first (the usual case,
 * nothing to do), then, under a transaction-scoped advisory lock so that processes starting at once
 * take turns, creates the schema if needed and applies the missing migrations in one transaction.
 * Refuses a newer version, and tables named like Ghost's that Ghost did not make, with a
 * `SessionStoreError` (`reason: 'schema'`).
 */
export async function migrateGhostTables(database: PostgresDatabase, tables: GhostTables): Promise<void> {
  const doing = `checking the schema version of '${tables.schema}'`;
  const current = await database.transaction(doing, undefined, (statements) =>
    appliedVersion(statements, tables),
  );
  if (current === schemaVersion) return;
  if (current !== undefined && current > schemaVersion) throw newerSchemaError(current, tables.schema);
  await database.transaction(`migrating schema '${tables.schema}'`, undefined, async (statements) => {
    await statements.run('SELECT pg_advisory_xact_lock($1, hashtext($2))', [
      migrationLockSpace,
      tables.schema,
    ]);
    const exists = await statements.run('SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $1', [
      tables.schema,
    ]);
    if (exists.rowCount === 0) await statements.run(`CREATE SCHEMA "${tables.schema}"`);
    let version = await appliedVersion(statements, tables);
    if (version === undefined) {
      const present = await statements.run(
        `SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND c.relname = ANY($2::text[]) ORDER BY c.relname`,
        [tables.schema, tableNames],
      );
      if (present.rowCount > 0) {
        const names = present.rows.map((row) => row.relname).join(', ');
        throw foreignSchemaError(tables.schema, `it has ${names} but no record of Ghost's migrations`);
      }
      await statements.run(
        `CREATE TABLE ${tables.migrations} (
          version integer PRIMARY KEY,
          name text NOT NULL,
          applied_at timestamptz NOT NULL DEFAULT now()
        )`,
      );
      version = 0;
    }
    if (version > schemaVersion) throw newerSchemaError(version, tables.schema);
    for (const migration of migrations) {
      if (migration.version <= version) continue;
      for (const statement of migration.statements(tables)) await statements.run(statement);
      await statements.run(`INSERT INTO ${tables.migrations} (version, name) VALUES ($1, $2)`, [
        migration.version,
        migration.name,
      ]);
    }
  });
}
