import type { BoundedOutput } from '../sandbox.js';

/** How many bytes of a stream a {@link BoundedOutputBuffer} keeps by default: 64 KiB. */
export const defaultBoundedOutputBytes = 64 * 1024;

/**
 * Keeps the first bytes of a stream, up to a cap, and counts everything it was given. It is the
 * live {@link BoundedOutput} of a sandboxed process: its properties reflect every `append` so far.
 *
 * Bytes are decoded only when `text` is read, so a multi-byte character split across two chunks
 * decodes whole; a character cut by the cap, or bytes that are not UTF-8, become U+FFFD.
 *
 * @example
 * ```ts
 * const output = new BoundedOutputBuffer(4);
 * output.append(Buffer.from('hello'));
 * output.text; // 'hell'
 * output.bytesSeen; // 5
 * output.isTruncated; // true
 * ```
 */
export class BoundedOutputBuffer implements BoundedOutput {
  /** The most bytes kept; later bytes are counted but dropped. */
  readonly capacityBytes: number;
  readonly #chunks: Buffer[] = [];
  #keptBytes = 0;
  #bytesSeen = 0;
  // Decoding on every read would cost a copy per read for a caller polling `text`; the cache is
  // dropped whenever a kept byte arrives.
  #decoded: string | undefined = '';

  /**
   * @param capacityBytes The most bytes to keep, a non-negative integer. Default 64 KiB.
   * @throws RangeError when `capacityBytes` is not a non-negative safe integer.
   */
  constructor(capacityBytes: number = defaultBoundedOutputBytes) {
    if (!Number.isSafeInteger(capacityBytes) || capacityBytes < 0) {
      throw new RangeError(
        `The output capacity must be a non-negative integer of bytes, got ${capacityBytes}.`,
      );
    }
    this.capacityBytes = capacityBytes;
  }

  /** Adds bytes the stream produced: keeps what fits under the cap and counts all of them. */
  append(chunk: Uint8Array): void {
    this.#bytesSeen += chunk.byteLength;
    const room = this.capacityBytes - this.#keptBytes;
    if (room <= 0 || chunk.byteLength === 0) return;
    // Copy: a stream may reuse the memory behind the chunk it handed over.
    const kept = Buffer.from(chunk.subarray(0, Math.min(room, chunk.byteLength)));
    this.#chunks.push(kept);
    this.#keptBytes += kept.byteLength;
    this.#decoded = undefined;
  }

  /** The text kept so far, decoded as UTF-8; bytes that are not valid UTF-8 become U+FFFD. */
  get text(): string {
    if (this.#decoded === undefined) {
      const joined = Buffer.concat(this.#chunks, this.#keptBytes);
      // Keep the joined copy so the next read after an append concatenates two chunks, not all of them.
      this.#chunks.splice(0, this.#chunks.length, joined);
      this.#decoded = joined.toString('utf8');
    }
    return this.#decoded;
  }

  /** How many bytes were appended in all, including those beyond the cap. */
  get bytesSeen(): number {
    return this.#bytesSeen;
  }

  /** True once more bytes were appended than the cap keeps, so `text` is not everything. */
  get isTruncated(): boolean {
    return this.#bytesSeen > this.capacityBytes;
  }
}
