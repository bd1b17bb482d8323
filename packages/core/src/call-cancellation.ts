/** One waiter per signal, so a thousand waiting calls cost one real `abort` listener. */
const waitersBySignal = new WeakMap<AbortSignal, Set<(reason: unknown) => void>>();

/**
 * Calls `onAborted` once `signal` aborts (at once when it already has) and returns the function
 * that unsubscribes. Every subscriber of a signal shares one listener, and unsubscribing is a
 * set deletion: Node's `EventTarget` costs far more per add and remove.
 */
export function subscribeToAbort(signal: AbortSignal, onAborted: (reason: unknown) => void): () => void {
  if (signal.aborted) {
    onAborted(signal.reason);
    return () => {};
  }
  let waiters = waitersBySignal.get(signal);
  if (waiters === undefined) {
    const subscribed = new Set<(reason: unknown) => void>();
    waiters = subscribed;
    waitersBySignal.set(signal, subscribed);
    signal.addEventListener(
      'abort',
      () => {
        for (const waiter of [...subscribed]) waiter(signal.reason);
        subscribed.clear();
      },
      { once: true },
    );
  }
  const subscribed = waiters;
  subscribed.add(onAborted);
  return () => {
    subscribed.delete(onAborted);
  };
}

/**
 * Everything that can end one tool call early: the signals it runs under (its run's, its caller's)
 * and {@link cancel} (its timeout). The call's own `AbortController` is made only when the tool
 * asks for its signal, so a tool that never looks at it costs no controller.
 */
export class CallCancellation {
  #isCancelled = false;
  #reason: unknown;
  #controller: AbortController | undefined;
  #rejectWait: ((reason: unknown) => void) | undefined;
  readonly #unsubscribes: (() => void)[] = [];

  constructor(signals: readonly (AbortSignal | undefined)[]) {
    for (const signal of signals) {
      if (signal !== undefined)
        this.#unsubscribes.push(subscribeToAbort(signal, (reason) => this.cancel(reason)));
    }
  }

  get isCancelled(): boolean {
    return this.#isCancelled;
  }

  /** The signal the tool sees: aborted with the reason the call was cancelled for. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#isCancelled) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Ends the call with `reason`: its signal aborts and whatever it waits for rejects with it. */
  cancel(reason: unknown): void {
    if (this.#isCancelled) return;
    this.#isCancelled = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
    this.#rejectWait?.(reason);
  }

  /**
   * Settles as `promise` does, or rejects with the cancellation's reason first. Work that ignores
   * its signal is not waited for: its late result is dropped.
   */
  race<T>(promise: Promise<T>): Promise<T> {
    if (this.#isCancelled) {
      promise.catch(() => {});
      return Promise.reject(this.#reason);
    }
    return new Promise<T>((resolve, reject) => {
      this.#rejectWait = reject;
      promise.then(resolve, reject);
    });
  }

  /** Stops listening to the signals; call it once the call is over. */
  dispose(): void {
    for (const unsubscribe of this.#unsubscribes) unsubscribe();
    this.#unsubscribes.length = 0;
    this.#rejectWait = undefined;
  }
}
