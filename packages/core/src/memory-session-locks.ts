import { SessionBusyError } from './session-errors.js';

/** One session's lock: who holds it and who waits, first come first served. */
interface SessionLock {
  holder: symbol | undefined;
  readonly waiters: (() => void)[];
}

/**
 * The locks of a `memorySessionStore`'s sessions, one per session id: a holder at a time, the
 * others waiting in order. A lock nobody holds or waits for is forgotten, so the table holds only
 * sessions in use.
 */
export class MemorySessionLocks {
  readonly #locks = new Map<string, SessionLock>();

  /** Takes the lock of `id` for `holder`, waiting behind earlier holders until `timeoutMs`. */
  acquire(id: string, holder: symbol, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let lock = this.#locks.get(id);
      if (lock === undefined) {
        lock = { holder: undefined, waiters: [] };
        this.#locks.set(id, lock);
      }
      const current = lock;
      if (current.holder === undefined) {
        current.holder = holder;
        resolve();
        return;
      }
      const settle = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const index = current.waiters.indexOf(wake);
        if (index >= 0) current.waiters.splice(index, 1);
        this.#forgetIfIdle(id);
      };
      const wake = () => {
        current.holder = holder; // before settle(), which forgets a lock nobody holds
        settle();
        resolve();
      };
      const onAbort = () => {
        settle();
        reject(signal?.reason);
      };
      const timer = setTimeout(() => {
        settle();
        reject(
          new SessionBusyError(
            `Session '${id}' of store 'memory' is held by another run, which did not release it within ${timeoutMs} ms. Nothing was written; try again when that run has ended, or raise lockTimeoutMs.`,
            { store: 'memory', sessionId: id, reason: 'timeout', lockTimeoutMs: timeoutMs },
          ),
        );
      }, timeoutMs);
      current.waiters.push(wake);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Releases the lock of `id` if `holder` holds it, handing it to the first waiter. */
  release(id: string, holder: symbol): void {
    const lock = this.#locks.get(id);
    if (lock?.holder !== holder) return;
    lock.holder = undefined;
    const next = lock.waiters[0];
    if (next === undefined) this.#forgetIfIdle(id);
    else next();
  }

  isHeldBy(id: string, holder: symbol): boolean {
    return this.#locks.get(id)?.holder === holder;
  }

  isHeld(id: string): boolean {
    return this.#locks.get(id)?.holder !== undefined;
  }

  #forgetIfIdle(id: string): void {
    const lock = this.#locks.get(id);
    if (lock !== undefined && lock.holder === undefined && lock.waiters.length === 0) this.#locks.delete(id);
  }
}
