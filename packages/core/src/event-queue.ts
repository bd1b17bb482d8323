/**
 * An unbounded single-consumer queue that turns pushed values into an async iterable. The
 * producer never waits for the consumer, so a slow consumer cannot stall the running work.
 */
export class EventQueue<Value> implements AsyncIterable<Value> {
  readonly #buffer: Value[] = [];
  #waiting: ((result: IteratorResult<Value>) => void) | undefined;
  #isClosed = false;
  #isIterating = false;
  readonly #onReturn: () => void;

  /** @param onReturn called when the consumer stops early (breaks out of its loop). */
  constructor(onReturn: () => void = () => {}) {
    this.#onReturn = onReturn;
  }

  push(value: Value): void {
    if (this.#isClosed) return;
    const waiting = this.#waiting;
    if (waiting) {
      this.#waiting = undefined;
      waiting({ value, done: false });
    } else {
      this.#buffer.push(value);
    }
  }

  /** Ends the iteration once the buffered values are consumed. */
  close(): void {
    this.#isClosed = true;
    const waiting = this.#waiting;
    if (waiting && this.#buffer.length === 0) {
      this.#waiting = undefined;
      waiting({ value: undefined, done: true });
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<Value> {
    if (this.#isIterating)
      throw new TypeError('This event stream is already being consumed; iterate it once.');
    this.#isIterating = true;
    return {
      next: () => {
        const value = this.#buffer.shift();
        if (value !== undefined) return Promise.resolve({ value, done: false });
        if (this.#isClosed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => {
          this.#waiting = resolve;
        });
      },
      return: () => {
        const wasOpen = !this.#isClosed;
        this.#isClosed = true;
        this.#buffer.length = 0;
        if (wasOpen) this.#onReturn();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
