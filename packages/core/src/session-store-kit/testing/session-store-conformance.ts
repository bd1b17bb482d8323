import { afterEach, describe } from 'vitest';
import type { SessionLimits, SessionStoreV1 } from '../../session-store.js';
import { actor, type ConformanceStores } from './conformance-stores.js';
import { sessionHistoryCases, storedAsWrittenCases } from './history-cases.js';
import { listingCases, removalCases } from './listing-cases.js';
import { closingCases, lockCases, sharedStorageCases } from './lock-cases.js';
import { idAndActorCases, ownerCases } from './owner-cases.js';
import { pausedRunIntegrityCases, pausedRunSessionCases, pausedRunWriteCases } from './paused-run-cases.js';
import { conditionalWriteCases, limitCases } from './write-cases.js';

/** What {@link describeSessionStoreConformance} takes besides the store factory. */
export interface SessionStoreConformanceOptions {
  /** The name the suite's `describe` block shows. Default: the first store's name. */
  readonly name?: string;
  /**
   * Opens a second store over the same storage as `store` (another connection, as a second process
   * would have): the suite then checks that locks and data are shared. Without it those cases skip,
   * saying why (a store in memory has no second view of its storage).
   */
  readonly openSibling?: (store: SessionStoreV1) => Promise<SessionStoreV1>;
}

/**
 * Makes a store for one test: empty, with the given limits over the defaults. The suite closes every
 * store it is given.
 */
export type CreateSessionStore = (options: {
  readonly limits?: Partial<SessionLimits>;
}) => Promise<SessionStoreV1>;

/**
 * The suite every session store runs: a store passes when every case passes. It uses only the
 * `SessionStoreV1` contract, so it runs the same against memory, SQLite, PostgreSQL and your own.
 * Call it at the top level of a test file.
 *
 * @example
 * ```ts
 * import { describeSessionStoreConformance } from '@ghost/core/session-store/testing';
 *
 * describeSessionStoreConformance(async ({ limits }) => myStore({ url: await freshDatabase(), limits }));
 * ```
 */
export function describeSessionStoreConformance(
  createStore: CreateSessionStore,
  options: SessionStoreConformanceOptions = {},
): void {
  const opened: SessionStoreV1[] = [];
  const stores = conformanceStores(createStore, options, opened);

  afterEach(async () => {
    const toClose = opened.splice(0);
    for (const store of toClose.reverse()) await store.close();
  });

  describe(`session store conformance${options.name === undefined ? '' : `: ${options.name}`}`, () => {
    describe('sessions and their history', () => {
      sessionHistoryCases(stores);
      storedAsWrittenCases(stores);
    });
    describe('idempotent and conditional writes', () => conditionalWriteCases(stores));
    describe('limits, checked before anything is written', () => limitCases(stores));
    describe('paused runs', () => {
      pausedRunWriteCases(stores);
      pausedRunIntegrityCases(stores);
      pausedRunSessionCases(stores);
    });
    describe('owners', () => ownerCases(stores));
    describe('ids and actors', () => idAndActorCases(stores));
    describe('one run at a time', () => lockCases(stores));
    describe('list, delete and prune', () => {
      listingCases(stores);
      removalCases(stores);
    });
    describe('closing', () => closingCases(stores));
    describe(`shared storage${stores.siblingSkip}`, () => sharedStorageCases(stores));
  });
}

/** The stores of one suite: each made (or opened as a sibling) is pushed to `opened`, to be closed. */
function conformanceStores(
  createStore: CreateSessionStore,
  options: SessionStoreConformanceOptions,
  opened: SessionStoreV1[],
): ConformanceStores {
  const { openSibling } = options;
  return {
    make: async (limits?: Partial<SessionLimits>) => {
      const store = await createStore(limits === undefined ? {} : { limits });
      opened.push(store);
      return store;
    },
    sibling: async (store: SessionStoreV1) => {
      if (openSibling === undefined) throw new Error('no sibling');
      const other = await openSibling(store);
      opened.push(other);
      return other;
    },
    hasSibling: openSibling !== undefined,
    siblingSkip:
      openSibling === undefined
        ? ' (skipped: this store has no second view of its storage, openSibling not given)'
        : '',
    openSession: (store: SessionStoreV1, id: string, who = actor, lockTimeoutMs = 5_000) =>
      store.open({ id, actor: who, lockTimeoutMs }),
  };
}
