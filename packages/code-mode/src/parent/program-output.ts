import { formatBytes } from '../shared/head-and-tail.js';

/**
 * Room for the notes that say where output was cut. A host that follows the protocol causes one
 * per program (between the head and the tail it kept); the allowance only stops a host that sends
 * a note with every frame from making notes the bulk of the output.
 */
const noteAllowanceBytes = 4 * 1024;

/**
 * A program's output on the parent side: what arrived since the last observation, in order. The
 * host already bounds it (head and tail of `outputBytes`); this keeps the parent safe from a host
 * that does not: at most `limit` bytes of text are kept per program, with notes of what was cut
 * between them. Counts of cut bytes that follow one another become one note, notes count against
 * a small allowance of their own, and past it cut output waits for the next observation's note.
 */
export class ProgramOutput {
  readonly #limit: number;
  #chunks: string[] = [];
  #textBytes = 0;
  #noteBytes = 0;
  /** Bytes cut since the last note: counted by the host (`skippedBytes`) or dropped here. */
  #cutBytes = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  append(text: string, skippedBytes = 0): void {
    this.#cutBytes += skippedBytes;
    if (text === '') return;
    const room = this.#limit - this.#textBytes;
    if (room <= 0 || (this.#cutBytes > 0 && !this.#placeNote())) {
      this.#cutBytes += Buffer.byteLength(text);
      return;
    }
    const kept = fitting(text, room);
    const keptBytes = Buffer.byteLength(kept);
    if (kept.length < text.length) this.#cutBytes += Buffer.byteLength(text) - keptBytes;
    this.#textBytes += keptBytes;
    this.#chunks.push(kept);
  }

  /** Output since the previous call. */
  take(): string {
    // One note per observation, whatever the allowance: the model learns output was cut.
    if (this.#cutBytes > 0) this.#chunks.push(this.#note());
    this.#cutBytes = 0;
    const text = this.#chunks.join('');
    this.#chunks = [];
    return text;
  }

  /** Places the note of the bytes cut so far, unless notes have used their allowance. */
  #placeNote(): boolean {
    const note = this.#note();
    const bytes = Buffer.byteLength(note);
    if (this.#noteBytes + bytes > noteAllowanceBytes) return false;
    this.#noteBytes += bytes;
    this.#chunks.push(note);
    this.#cutBytes = 0;
    return true;
  }

  #note(): string {
    return `\n[… ${formatBytes(this.#cutBytes)} bytes of output cut here: the output passed its ${formatBytes(this.#limit)}-byte limit, so its start and end are kept …]\n`;
  }
}

/** The longest start of `text` that fits in `room` bytes of UTF-8, cut on a character boundary. */
function fitting(text: string, room: number): string {
  if (text.length * 3 <= room || Buffer.byteLength(text) <= room) return text;
  return Buffer.from(text)
    .subarray(0, room)
    .toString('utf8')
    .replace(/\uFFFD+$/, '');
}
