/**
 * For session store authors' tests: `describeSessionStoreConformance`, the suite every store runs
 * (memory, SQLite, PostgreSQL and yours). Needs vitest.
 *
 * @example
 * ```ts
 * import { describeSessionStoreConformance } from '@ghost/core/session-store/testing';
 * ```
 *
 * @packageDocumentation
 */

export {
  type CreateSessionStore,
  describeSessionStoreConformance,
  type SessionStoreConformanceOptions,
} from './session-store-conformance.js';
