const numberFormat = new Intl.NumberFormat('en-US');

/**
 * A program's output on the parent side: what arrived since the last observation, in order. The
 * host already bounds it (head and tail of `outputBytes`); this keeps the parent safe from a host
 * that does not, and spells out where output was cut and how much.
 */
export class ProgramOutput {
  readonly #limit: number;
  #chunks: string[] = [];
  #receivedBytes = 0;
  #droppedBytes = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  append(text: string, skippedBytes = 0): void {
    if (skippedBytes > 0) {
      this.#chunks.push(
        `\n[… ${numberFormat.format(skippedBytes)} bytes of output cut here: the output passed its ${numberFormat.format(this.#limit)}-byte limit, so its start and end are kept …]\n`,
      );
    }
    const bytes = Buffer.byteLength(text);
    if (this.#receivedBytes + bytes > this.#limit) {
      this.#droppedBytes += bytes;
      return;
    }
    this.#receivedBytes += bytes;
    this.#chunks.push(text);
  }

  /** Output since the previous call. */
  take(): string {
    if (this.#droppedBytes > 0) {
      this.#chunks.push(`\n[… ${numberFormat.format(this.#droppedBytes)} more bytes of output dropped …]\n`);
      this.#droppedBytes = 0;
    }
    const text = this.#chunks.join('');
    this.#chunks = [];
    return text;
  }
}
