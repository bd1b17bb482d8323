/** What {@link renewSessionLease} takes. */
export interface SessionLeaseRenewal {
  /** Extends the lease; resolves `false` when it is no longer this holder's. */
  readonly renew: () => Promise<boolean>;
  /** How often to renew: a third of the lease's length keeps two chances before it expires. */
  readonly intervalMs: number;
}

/** A lease being renewed in the background. */
export interface RenewingSessionLease {
  /** True once a renewal found the lease taken by someone else. */
  readonly isLost: boolean;
  /** Stops renewing (before the store releases the lease). Safe to call more than once. */
  stop(): void;
}

/**
 * Renews a store's session lease every `intervalMs` while a run holds the session, one renewal at a
 * time. A renewal that fails (the storage is briefly unreachable) is tried again at the next tick; if
 * the lease expires meanwhile the store's next write finds it lost. The timer never keeps the
 * process alive on its own.
 */
export function renewSessionLease(renewal: SessionLeaseRenewal): RenewingSessionLease {
  let isLost = false;
  let isRenewing = false;
  const timer = setInterval(() => {
    if (isRenewing || isLost) return;
    isRenewing = true;
    renewal.renew().then(
      (isHeld) => {
        isRenewing = false;
        if (!isHeld) {
          isLost = true;
          clearInterval(timer);
        }
      },
      () => {
        isRenewing = false; // tried again at the next tick
      },
    );
  }, renewal.intervalMs);
  timer.unref();
  return {
    get isLost() {
      return isLost;
    },
    stop: () => clearInterval(timer),
  };
}
