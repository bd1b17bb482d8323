import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SessionStoreV1 } from '@ghost/core/session-store';
import { describeSessionStoreConformance } from '@ghost/core/session-store/testing';
import { afterAll, beforeAll } from 'vitest';
import { sqliteSessionStore } from './sqlite-session-store.js';

let directory = '';
let files = 0;
/** The file each store was opened on, so a sibling opens the same one. */
const pathOf = new WeakMap<SessionStoreV1, string>();

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'ghost-sqlite-conformance-'));
});
afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

describeSessionStoreConformance(
  async ({ limits }) => {
    files += 1;
    const path = join(directory, `store ${files}.db`);
    const store = sqliteSessionStore({ path, ...(limits === undefined ? {} : { limits }) });
    pathOf.set(store, path);
    return store;
  },
  {
    name: 'sqlite',
    openSibling: async (store) => {
      const path = pathOf.get(store);
      if (path === undefined) throw new Error('the sibling of a store this test did not make');
      return sqliteSessionStore({ path, limits: store.limits });
    },
  },
);
