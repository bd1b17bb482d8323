import { SessionBusyError } from '../session-errors.js';

/** What {@link waitForSessionLock} takes. */
export interface SessionLockWait {
  /** Tries once to take the lock; resolves `true` when it did. */
  readonly tryAcquire: () => Promise<boolean>;
  readonly lockTimeoutMs: number;
  readonly signal?: AbortSignal | undefined;
  /** The store's name and the session id, for the error. */
  readonly store: string;
  readonly sessionId: string;
}

const firstDelayMs = 5;
const longestDelayMs = 250;

/**
 * Takes a session's lock for a store whose lock is a row (a lease) rather than something that can
 * be waited on: tries, then tries again after a short, growing, jittered pause (5 ms to 250 ms) until
 * it succeeds, `lockTimeoutMs` has passed (`SessionBusyError`, `reason: 'timeout'`) or `signal`
 * aborts (rejects with its reason). Errors from `tryAcquire` end the wait. No timer outlives it.
 */
export async function waitForSessionLock(wait: SessionLockWait): Promise<void> {
  const { signal } = wait;
  const startedAt = Date.now();
  let delayMs = firstDelayMs;
  for (;;) {
    signal?.throwIfAborted();
    if (await wait.tryAcquire()) return;
    const remainingMs = wait.lockTimeoutMs - (Date.now() - startedAt);
    if (remainingMs <= 0) {
      throw new SessionBusyError(
        `Session '${wait.sessionId}' of store '${wait.store}' is held by another run, which did not release it within ${wait.lockTimeoutMs} ms. Nothing was written; try again when that run has ended, or raise lockTimeoutMs.`,
        {
          store: wait.store,
          sessionId: wait.sessionId,
          reason: 'timeout',
          lockTimeoutMs: wait.lockTimeoutMs,
        },
      );
    }
    const pauseMs = Math.min(remainingMs, delayMs * (0.5 + Math.random()));
    await pause(pauseMs, signal);
    delayMs = Math.min(longestDelayMs, delayMs * 2);
  }
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
