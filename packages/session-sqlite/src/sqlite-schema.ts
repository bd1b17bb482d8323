import { SessionStoreError } from '@ghost/core/session-store';
import type { Transaction } from '@libsql/client';

/** The value of `ghost_schema.store`, which marks the table as this package's. */
const schemaOwner = '@ghost/session-sqlite';

/**
 * The schema, one migration per version, applied in order. A release that changes the schema adds
 * the next version here; it never edits one that has shipped.
 */
const migrations: readonly { readonly version: number; readonly statements: readonly string[] }[] = [
  {
    version: 1,
    statements: [
      `CREATE TABLE ghost_schema (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        store TEXT NOT NULL,
        version INTEGER NOT NULL
      )`,
      // `sequence` numbers sessions in creation order (list cursors); AUTOINCREMENT never reuses one.
      `CREATE TABLE ghost_sessions (
        sequence INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        actor TEXT NOT NULL,
        state TEXT NOT NULL,
        message_count INTEGER NOT NULL,
        byte_count INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      )`,
      'CREATE INDEX ghost_sessions_by_actor ON ghost_sessions (actor, sequence)',
      'CREATE INDEX ghost_sessions_by_update ON ghost_sessions (updated_at)',
      // A rowid table (messages may be megabytes); the primary key's index serves history windows.
      `CREATE TABLE ghost_session_messages (
        session INTEGER NOT NULL,
        position INTEGER NOT NULL,
        message TEXT NOT NULL,
        bytes INTEGER NOT NULL,
        operation_id TEXT NOT NULL,
        outcome TEXT,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (session, position)
      )`,
      `CREATE TABLE ghost_session_operations (
        session INTEGER NOT NULL,
        operation_id TEXT NOT NULL,
        digest TEXT NOT NULL,
        PRIMARY KEY (session, operation_id)
      ) WITHOUT ROWID`,
      // Keyed by the session id, not its row: a new session is held before its first write creates it.
      `CREATE TABLE ghost_session_leases (
        session_id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        pid INTEGER NOT NULL,
        host TEXT NOT NULL,
        expires_at INTEGER NOT NULL
      ) WITHOUT ROWID`,
      'CREATE INDEX ghost_session_leases_by_expiry ON ghost_session_leases (expires_at)',
    ],
  },
  {
    version: 2,
    // The paused run kept with a session (SessionWrite.pause): JSON text, NULL when there is none.
    statements: ['ALTER TABLE ghost_sessions ADD COLUMN pause TEXT'],
  },
];

/** The schema version this release writes, and the newest it reads. */
export const sqliteSchemaVersion = migrations.at(-1)?.version ?? 0;

/** Every table the schema has ever had: finding one without `ghost_schema` means it is not Ghost's. */
const ghostTables = [
  'ghost_schema',
  'ghost_sessions',
  'ghost_session_messages',
  'ghost_session_operations',
  'ghost_session_leases',
];

/**
 * Brings the database to {@link sqliteSchemaVersion} inside `transaction` (a write transaction,
 * so two processes starting at once migrate one after the other: the second finds the work done).
 * Refuses, with a `SessionStoreError` (`reason: 'schema'`), a database written by a newer release
 * and tables of Ghost's names that Ghost did not make.
 */
export async function migrateSqliteSchema(transaction: Transaction, where: string): Promise<void> {
  const found = await transaction.execute({
    sql: `SELECT name FROM sqlite_master WHERE type = 'table' AND name IN (${ghostTables.map(() => '?').join(', ')})`,
    args: ghostTables,
  });
  const tables = new Set(found.rows.map((row) => String(row.name)));
  let version = 0;
  if (tables.has('ghost_schema')) {
    version = await readVersion(transaction, where);
  } else if (tables.size > 0) {
    throw new SessionStoreError(
      `Session store 'sqlite' cannot use ${where}: it has a table named ${[...tables].join(', ')} that @ghost/session-sqlite did not make (there is no ghost_schema table). Point the store at another file, or rename that table.`,
      { store: 'sqlite', reason: 'schema' },
    );
  }
  if (version > sqliteSchemaVersion) {
    throw new SessionStoreError(
      `Session store 'sqlite' cannot use ${where}: a newer @ghost/session-sqlite wrote it (schema version ${version}; this release knows up to ${sqliteSchemaVersion}). Upgrade @ghost/session-sqlite in this application; the file was left unchanged.`,
      { store: 'sqlite', reason: 'schema' },
    );
  }
  if (version === sqliteSchemaVersion) return;
  for (const migration of migrations) {
    if (migration.version <= version) continue;
    for (const statement of migration.statements) await transaction.execute(statement);
  }
  await transaction.execute({
    sql: 'INSERT INTO ghost_schema (id, store, version) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET version = excluded.version',
    args: [schemaOwner, sqliteSchemaVersion],
  });
}

async function readVersion(transaction: Transaction, where: string): Promise<number> {
  const notOurs = (cause?: unknown) =>
    new SessionStoreError(
      `Session store 'sqlite' cannot use ${where}: its ghost_schema table was not made by @ghost/session-sqlite. Point the store at another file, or rename that table.`,
      { store: 'sqlite', reason: 'schema', cause },
    );
  let rows: Awaited<ReturnType<Transaction['execute']>>['rows'];
  try {
    rows = (await transaction.execute('SELECT id, store, version FROM ghost_schema')).rows;
  } catch (error) {
    throw notOurs(error); // its columns are not ours
  }
  const [row] = rows;
  const version = row?.version;
  if (rows.length !== 1 || row?.id !== 1 || row.store !== schemaOwner) throw notOurs();
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1) throw notOurs();
  return version;
}
