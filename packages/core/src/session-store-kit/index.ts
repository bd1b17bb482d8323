/**
 * For session store authors: the `SessionStoreV1` contract, `defineSessionStore`, and the helpers
 * every store needs (request checks, the limits check of a write, waiting for a lease and renewing
 * it). Prove a store with `describeSessionStoreConformance` from `@ghost/core/session-store/testing`;
 * `docs/guides/session-store.md` walks through one.
 *
 * @example
 * ```ts
 * import { defineSessionStore, planSessionWrite } from '@ghost/core/session-store';
 * ```
 *
 * @packageDocumentation
 */

export type { PluginDeclaration } from '../plugin-declaration.js';
export { defaultSessionLockTimeoutMs } from '../run-session.js';
export {
  SessionAccessError,
  SessionBusyError,
  type SessionBusyErrorInit,
  SessionConflictError,
  type SessionConflictErrorInit,
  type SessionErrorCode,
  SessionLimitError,
  type SessionLimitErrorInit,
  type SessionLimitName,
  SessionStoreError,
  type SessionStoreErrorInit,
} from '../session-errors.js';
export {
  checkSessionActor,
  checkSessionId,
  checkSessionOperationId,
  maxSessionIdLength,
} from '../session-identity.js';
export { encodeSessionMessage } from '../session-message-codec.js';
export {
  defaultSessionLimits,
  type OpenedSessionV1,
  type SessionLimits,
  type SessionListRequest,
  type SessionOpenRequest,
  type SessionPage,
  type SessionRecord,
  type SessionStoreV1,
  type SessionSummary,
  type SessionTurnOutcome,
  type SessionWrite,
  type SessionWriteResult,
} from '../session-store.js';
export { defineSessionStore } from './define-session-store.js';
export { type HeldSessionLease, holdSessionLease, type SessionLease } from './hold-session-lease.js';
export {
  applySessionWrite,
  type SessionDocument,
  type SessionDocumentChange,
  type SessionDocumentRecord,
  sessionDocumentHistory,
  sessionDocumentPage,
} from './session-document.js';
export {
  type RenewingSessionLease,
  renewSessionLease,
  type SessionLeaseRenewal,
} from './session-lease-renewal.js';
export {
  type CheckedSessionListRequest,
  checkSessionListRequest,
  sessionListCursor,
} from './session-list-request.js';
export {
  checkSessionDeleteRequest,
  checkSessionOpenRequest,
  checkSessionPruneRequest,
  defaultDeleteLockTimeoutMs,
} from './session-requests.js';
export {
  planSessionWrite,
  type SessionTotals,
  type SessionWriteChange,
  type SessionWritePlan,
} from './session-write-plan.js';
export { type SessionLockWait, waitForSessionLock } from './wait-for-session-lock.js';
