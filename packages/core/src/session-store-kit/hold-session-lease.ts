import { renewSessionLease } from './session-lease-renewal.js';
import { waitForSessionLock } from './wait-for-session-lock.js';

/** What {@link holdSessionLease} takes: how to take, renew and give back one session's lease. */
export interface SessionLease {
  readonly store: string;
  readonly sessionId: string;
  readonly lockTimeoutMs: number;
  readonly signal?: AbortSignal | undefined;
  /** How long the lease lasts unless renewed; it is renewed every third of it. */
  readonly leaseMs: number;
  /** Tries once to take the lease; `true` when it did. */
  acquire(): Promise<boolean>;
  /** Extends it; `false` when it is no longer this holder's. */
  renew(): Promise<boolean>;
  /** Gives it back (only if still this holder's). */
  release(): Promise<void>;
}

/** A lease held by {@link holdSessionLease}. */
export interface HeldSessionLease {
  /** Stops renewing and gives the lease back. Safe to call more than once. */
  release(): Promise<void>;
}

/**
 * Takes a session's lease ({@link waitForSessionLock}), keeps renewing it in the background
 * ({@link renewSessionLease}) and gives it back once on `release()`: the lock of a store whose lock
 * is a row or a file. The store's writes still check that they hold it (fencing).
 */
export async function holdSessionLease(lease: SessionLease): Promise<HeldSessionLease> {
  await waitForSessionLock({
    tryAcquire: () => lease.acquire(),
    lockTimeoutMs: lease.lockTimeoutMs,
    signal: lease.signal,
    store: lease.store,
    sessionId: lease.sessionId,
  });
  const renewal = renewSessionLease({ renew: () => lease.renew(), intervalMs: lease.leaseMs / 3 });
  let releasing: Promise<void> | undefined;
  return {
    release: () => {
      renewal.stop();
      releasing ??= lease.release();
      return releasing;
    },
  };
}
