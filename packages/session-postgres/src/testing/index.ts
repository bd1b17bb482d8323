/**
 * For tests of applications that use PostgreSQL: a throwaway PostgreSQL cluster started from this
 * machine's server binaries (no Docker), the one Ghost's own tests and benchmarks use.
 *
 * @example
 * ```ts
 * import { startPostgresTestCluster } from '@ghost/session-postgres/testing';
 *
 * const cluster = await startPostgresTestCluster();
 * const store = postgresSessionStore({ connectionString: await cluster.createDatabase() });
 * // ...
 * await store.close();
 * await cluster.destroy();
 * ```
 *
 * @packageDocumentation
 */

export {
  decidePostgresAvailability,
  type PostgresAvailability,
  type PostgresBinaries,
  type PostgresFacts,
  postgresAvailability,
  type ServerIdentity,
} from './postgres-binaries.js';
export { PostgresTestCluster, startPostgresTestCluster } from './postgres-test-cluster.js';
