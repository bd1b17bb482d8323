/** Output is sent once this many bytes are waiting, or at the end of the current job. */
const flushBytes = 16 * 1024;

/** A chunk of program output for the parent; `skippedBytes` counts output cut just before it. */
export interface OutputChunk {
  readonly text: string;
  readonly skippedBytes?: number;
}

/**
 * Program output on the host side, bounded by `limit` bytes: the first half is sent as it is
 * written, coalesced into chunks (10,000 tiny `console.log`s become a few frames); past it only
 * a rolling tail of the other half is kept and sent when the program ends, with the number of
 * bytes cut between them. So the protocol carries at most `limit` bytes of output per program.
 */
export class HostOutput {
  readonly #headLimit: number;
  readonly #tailLimit: number;
  readonly #send: (chunk: OutputChunk) => void;
  #pending: string[] = [];
  #pendingBytes = 0;
  #headBytes = 0;
  #tail: string[] = [];
  #tailBytes = 0;
  #skippedBytes = 0;
  #isFlushScheduled = false;

  constructor(limit: number, send: (chunk: OutputChunk) => void) {
    this.#headLimit = Math.floor(limit / 2);
    this.#tailLimit = limit - this.#headLimit;
    this.#send = send;
  }

  write(text: string): void {
    if (text === '') return;
    const bytes = Buffer.byteLength(text);
    if (this.#tail.length === 0 && this.#headBytes + bytes <= this.#headLimit) {
      this.#headBytes += bytes;
      this.#pending.push(text);
      this.#pendingBytes += bytes;
      if (this.#pendingBytes >= flushBytes) this.flush();
      else this.#scheduleFlush();
      return;
    }
    this.#keepInTail(text, bytes);
  }

  /** Sends what is waiting from the head. */
  flush(): void {
    if (this.#pending.length === 0) return;
    const text = this.#pending.join('');
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#send({ text });
  }

  /** Sends everything left: the head's rest, then the tail with the count of bytes cut. */
  finish(): void {
    this.flush();
    if (this.#tail.length === 0) return;
    const text = this.#tail.join('');
    this.#tail = [];
    this.#tailBytes = 0;
    this.#send(this.#skippedBytes > 0 ? { text, skippedBytes: this.#skippedBytes } : { text });
  }

  #keepInTail(text: string, bytes: number): void {
    this.#tail.push(text);
    this.#tailBytes += bytes;
    while (this.#tailBytes > this.#tailLimit && this.#tail.length > 0) {
      const first = this.#tail[0] as string;
      const firstBytes = Buffer.byteLength(first);
      const excess = this.#tailBytes - this.#tailLimit;
      if (firstBytes <= excess) {
        this.#tail.shift();
        this.#tailBytes -= firstBytes;
        this.#skippedBytes += firstBytes;
      } else {
        const kept = Buffer.from(first)
          .subarray(excess)
          .toString('utf8')
          .replace(/^\uFFFD+/, '');
        const keptBytes = Buffer.byteLength(kept);
        this.#tail[0] = kept;
        this.#tailBytes -= firstBytes - keptBytes;
        this.#skippedBytes += firstBytes - keptBytes;
      }
    }
  }

  #scheduleFlush(): void {
    if (this.#isFlushScheduled) return;
    this.#isFlushScheduled = true;
    // A macrotask, so everything one synchronous stretch of the program wrote goes in one frame.
    setImmediate(() => {
      this.#isFlushScheduled = false;
      this.flush();
    });
  }
}
