/**
 * Runs at most `limit` tasks at a time; the rest wait in the order they were queued (a bounded
 * queue, not batches). The agent loop bounds its parallel tool calls with it, and code mode's
 * broker bounds the calls of one program.
 *
 * @example
 * ```ts
 * const limit = new ConcurrencyLimit(8);
 * const results = await Promise.all(calls.map((call) => limit.run(() => runOne(call))));
 * ```
 */
export class ConcurrencyLimit {
  #running = 0;
  readonly #queue: (() => void)[] = [];
  /** How many tasks may run at once. */
  readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  /** How many tasks are running now (more than `limit` only after {@link startAllWaiting}). */
  get running(): number {
    return this.#running;
  }

  /** Runs `task` once fewer than `limit` tasks run and every task queued before it has started. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#running < this.limit && this.#queue.length === 0) this.#running += 1;
    // A finishing task hands its place to the next one in the queue, so the count stays the same.
    else await new Promise<void>((start) => this.#queue.push(start));
    try {
      return await task();
    } finally {
      const next = this.#queue.shift();
      if (next) next();
      else this.#running -= 1;
    }
  }

  /**
   * Starts every queued task now, over the limit. For when the work they were waiting on is over
   * (a program ended) and each will return at once: they need not wait for the tasks still running.
   */
  startAllWaiting(): void {
    for (const start of this.#queue.splice(0)) {
      this.#running += 1;
      start();
    }
  }
}
