import { afterAll, beforeAll, describe, it } from 'vitest';
import { postgresAvailability } from '../testing/postgres-binaries.js';
import { PostgresTestCluster } from '../testing/postgres-test-cluster.js';

/** What the body of {@link describeWithPostgres} gets: the file's cluster, once started. */
export interface PostgresTestContext {
  /** The running cluster (throws before `beforeAll` has started it). */
  readonly cluster: () => PostgresTestCluster;
}

const availability = postgresAvailability();

/**
 * A `describe` block with a throwaway PostgreSQL cluster of its own: started in `beforeAll`, stopped
 * and removed in `afterAll` (which vitest runs when tests fail too). Where PostgreSQL cannot be
 * installed here it skips, saying why in its name; where `npm run setup` would have installed it, a
 * test fails saying to run it.
 */
export function describeWithPostgres(name: string, body: (context: PostgresTestContext) => void): void {
  if (availability.state === 'skip') {
    describe(name, () => {
      it.skip(`(skipped: ${availability.reason})`, () => {});
    });
    return;
  }
  if (availability.state === 'missing') {
    describe(name, () => {
      it('needs a PostgreSQL server', () => {
        throw new Error(availability.reason);
      });
    });
    return;
  }
  const { binaries } = availability;
  describe(name, () => {
    let cluster: PostgresTestCluster | undefined;
    beforeAll(async () => {
      cluster = await PostgresTestCluster.start(binaries);
    }, 60_000);
    afterAll(async () => {
      await cluster?.destroy();
    }, 60_000);
    body({
      cluster: () => {
        if (cluster === undefined) throw new Error('the PostgreSQL test cluster did not start');
        return cluster;
      },
    });
  });
}
