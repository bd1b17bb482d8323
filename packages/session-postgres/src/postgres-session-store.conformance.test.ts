import type { SessionStoreV1 } from '@ghost/core';
import { describeSessionStoreConformance } from '@ghost/core/session-store/testing';
import { beforeAll } from 'vitest';
import { postgresSessionStore } from './postgres-session-store.js';
import { describeWithPostgres } from './test-support/describe-with-postgres.js';

describeWithPostgres('postgresSessionStore conformance', ({ cluster }) => {
  let connectionString = '';
  beforeAll(async () => {
    connectionString = await cluster().createDatabase();
  });

  // Each store gets a schema of its own (empty storage per test); a sibling shares it.
  const schemas = new WeakMap<SessionStoreV1, string>();
  let stores = 0;
  describeSessionStoreConformance(
    async ({ limits }) => {
      stores += 1;
      const schema = `conformance_${stores}`;
      const store = postgresSessionStore(
        { connectionString },
        { schema, leaseMs: 2_000, ...(limits === undefined ? {} : { limits }) },
      );
      schemas.set(store, schema);
      return store;
    },
    {
      name: 'postgres',
      openSibling: async (store) =>
        postgresSessionStore(
          { connectionString },
          { schema: schemas.get(store) ?? 'public', leaseMs: 2_000 },
        ),
    },
  );
});
