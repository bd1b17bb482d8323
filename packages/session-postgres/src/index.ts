/**
 * Ghost sessions on PostgreSQL, for applications that run on several processes or machines:
 * `postgresSessionStore({ connectionString } | { pool }, options)` for `createRuntime({ sessionStore })`.
 *
 * @example
 * ```ts
 * import { postgresSessionStore } from '@ghost/session-postgres';
 *
 * const sessionStore = postgresSessionStore({ connectionString: process.env.DATABASE_URL! });
 * ```
 *
 * @packageDocumentation
 */

export { postgresSessionStore } from './postgres-session-store.js';
export type {
  PostgresSessionConnection,
  PostgresSessionStoreOptions,
} from './postgres-session-store-options.js';
