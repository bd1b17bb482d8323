/**
 * Resolves when `promise` settles, or rejects with the signal's reason when it aborts first. Work that
 * ignores its signal (a tool, a model stream) is not waited for: its late result is dropped.
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    // Dropped like a late result: its failure must not go unhandled.
    promise.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

// setTimeout fires at once (with a warning) for a delay above this; longer waits have no timer.
const longestTimerMs = 2_147_483_647;

/**
 * A signal of its own for one stretch of streaming (a model turn, a retried attempt): it aborts
 * when the parent signal does, or when a wait it watches lasts longer than allowed. `arm` before
 * each wait, `disarm` after, so time spent by whoever reads the stream never counts; `dispose`
 * when the stretch ends, which stops the timer and the parent's listener.
 */
export class WaitWatchdog {
  readonly #controller = new AbortController();
  readonly #parent: AbortSignal;
  readonly #onParentAbort = () => this.#controller.abort(this.#parent.reason);
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(parent: AbortSignal) {
    this.#parent = parent;
    if (parent.aborted) this.#onParentAbort();
    else parent.addEventListener('abort', this.#onParentAbort, { once: true });
  }

  /** Aborts when the parent does or a watched wait runs out. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Aborts the signal with `reason()` unless {@link disarm} comes within `timeoutMs`. */
  arm(timeoutMs: number, reason: () => Error): void {
    this.disarm();
    if (timeoutMs > longestTimerMs) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#controller.abort(reason());
    }, timeoutMs);
  }

  disarm(): void {
    if (this.#timer === undefined) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** `promise`, or the signal's reason if it aborts first (see {@link raceAbort}). */
  race<T>(promise: Promise<T>): Promise<T> {
    return raceAbort(promise, this.#controller.signal);
  }

  dispose(): void {
    this.disarm();
    this.#parent.removeEventListener('abort', this.#onParentAbort);
  }
}
