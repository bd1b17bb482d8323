/**
 * The embedded session store for Ghost agents: `sqliteSessionStore({ path })` keeps conversations in
 * a SQLite file that every process on the machine can share. For applications.
 *
 * @example
 * ```ts
 * import { sqliteSessionStore } from '@ghost/session-sqlite';
 * ```
 *
 * @packageDocumentation
 */

export { sqliteSessionStore } from './sqlite-session-store.js';
export type { SqliteSessionStoreOptions } from './sqlite-session-store-options.js';
