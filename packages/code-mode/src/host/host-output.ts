/** Output is sent once this many bytes are waiting, or at the end of the current job. */
const flushBytes = 16 * 1024;

/** Past the head, writes are joined into pieces of about this size, so dropping one costs O(1). */
const tailPieceBytes = 16 * 1024;

/** A chunk of program output for the parent; `skippedBytes` counts output cut just before it. */
export interface OutputChunk {
  readonly text: string;
  readonly skippedBytes?: number;
}

/** Joined text of the tail and its size in UTF-8 bytes. */
interface TailPiece {
  readonly text: string;
  readonly bytes: number;
}

/**
 * Program output on the host side, bounded by `limit` bytes: the first half is sent as it is
 * written, coalesced into chunks (10,000 tiny `console.log`s become a few frames); past it only
 * a rolling tail of the other half is kept and sent when the program ends, with the number of
 * bytes cut between them. So the protocol carries at most `limit` bytes of output per program.
 *
 * Output past the head costs a byte count and, for what stays in the tail, a join: writes are
 * joined into pieces of about 16 KiB, and the oldest whole piece is dropped as soon as the newer
 * ones fill the tail. So a program that prints millions of lines holds the host to about
 * `limit` bytes of text and does constant work per line (no per-line list kept or shifted).
 */
export class HostOutput {
  readonly #headLimit: number;
  readonly #tailLimit: number;
  readonly #send: (chunk: OutputChunk) => void;
  #pending: string[] = [];
  #pendingBytes = 0;
  #headBytes = 0;
  #isPastHead = false;
  /** Whole tail pieces, oldest first from `#firstPiece` (dropped ones are cleared lazily). */
  #pieces: TailPiece[] = [];
  #firstPiece = 0;
  #piecesBytes = 0;
  /** Writes not yet joined into a piece. */
  #newest: string[] = [];
  #newestBytes = 0;
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
    if (this.#isPastHead) {
      this.#keepInTail(text, bytes);
      return;
    }
    if (this.#headBytes + bytes <= this.#headLimit) {
      this.#keepInHead(text, bytes);
      return;
    }
    // The head ends with what fits of this write (up to its last line break, if it has one
    // there); the rest starts the tail.
    const head = leadingLines(text, this.#headLimit - this.#headBytes);
    const headBytes = Buffer.byteLength(head);
    if (head !== '') this.#keepInHead(head, headBytes);
    this.flush();
    this.#isPastHead = true;
    if (head.length < text.length) this.#keepInTail(text.slice(head.length), bytes - headBytes);
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
    this.#joinNewest();
    const pieces = this.#pieces.slice(this.#firstPiece);
    this.#pieces = [];
    this.#firstPiece = 0;
    if (pieces.length === 0) return;
    let text = pieces.map((piece) => piece.text).join('');
    const excess = this.#piecesBytes - this.#tailLimit;
    this.#piecesBytes = 0;
    if (excess > 0) {
      const kept = keepLastBytes(text, excess);
      this.#skippedBytes += Buffer.byteLength(text) - Buffer.byteLength(kept);
      text = kept;
    }
    this.#send(this.#skippedBytes > 0 ? { text, skippedBytes: this.#skippedBytes } : { text });
  }

  #keepInHead(text: string, bytes: number): void {
    this.#headBytes += bytes;
    this.#pending.push(text);
    this.#pendingBytes += bytes;
    if (this.#pendingBytes >= flushBytes) this.flush();
    else this.#scheduleFlush();
  }

  #keepInTail(text: string, bytes: number): void {
    if (bytes >= this.#tailLimit) {
      // One write fills the tail by itself: everything before it is cut, and so is its own start.
      this.#skippedBytes += this.#piecesBytes + this.#newestBytes;
      this.#pieces = [];
      this.#firstPiece = 0;
      this.#newest = [];
      this.#newestBytes = 0;
      const kept = keepLastBytes(text, bytes - this.#tailLimit);
      const keptBytes = Buffer.byteLength(kept);
      this.#skippedBytes += bytes - keptBytes;
      this.#pieces.push({ text: kept, bytes: keptBytes });
      this.#piecesBytes = keptBytes;
      return;
    }
    this.#newest.push(text);
    this.#newestBytes += bytes;
    if (this.#newestBytes >= tailPieceBytes) this.#joinNewest();
  }

  /** Joins the newest writes into a piece, then drops the oldest pieces the newer ones replace. */
  #joinNewest(): void {
    if (this.#newest.length === 0) return;
    this.#pieces.push({ text: this.#newest.join(''), bytes: this.#newestBytes });
    this.#piecesBytes += this.#newestBytes;
    this.#newest = [];
    this.#newestBytes = 0;
    for (;;) {
      const oldest = this.#pieces[this.#firstPiece];
      if (oldest === undefined || this.#piecesBytes - oldest.bytes < this.#tailLimit) break;
      this.#pieces[this.#firstPiece] = { text: '', bytes: 0 };
      this.#firstPiece += 1;
      this.#piecesBytes -= oldest.bytes;
      this.#skippedBytes += oldest.bytes;
    }
    // Dropped slots are removed in one go once they outnumber the live ones.
    if (this.#firstPiece > 32 && this.#firstPiece * 2 > this.#pieces.length) {
      this.#pieces = this.#pieces.slice(this.#firstPiece);
      this.#firstPiece = 0;
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

/** `text` without its first `bytes` UTF-8 bytes, never starting inside a character. */
function keepLastBytes(text: string, bytes: number): string {
  return Buffer.from(text)
    .subarray(bytes)
    .toString('utf8')
    .replace(/^\uFFFD+/, '');
}

/**
 * The longest start of `text` within `bytes` UTF-8 bytes, never ending inside a character, and
 * cut after its last line break when it has one. Runs once per program, where the head ends.
 */
function leadingLines(text: string, bytes: number): string {
  let used = 0;
  let end = 0;
  let lineEnd = 0;
  while (end < text.length) {
    const code = text.codePointAt(end) as number;
    // As Buffer.byteLength counts: a lone surrogate becomes U+FFFD, three bytes.
    const size = code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    if (used + size > bytes) break;
    used += size;
    end += code < 0x10000 ? 1 : 2;
    if (code === 0x0a) lineEnd = end;
  }
  return text.slice(0, lineEnd > 0 ? lineEnd : end);
}
