/** The largest frame either side accepts: 64 MiB of JSON. */
export const maxFrameBytes = 64 * 1024 * 1024;

const headerBytes = 4;

/** A frame broke the wire format: too large, or not a JSON object. */
export class FrameError extends Error {
  override readonly name = 'FrameError';
}

/** Encodes one message as a frame: a 4-byte big-endian length, then UTF-8 JSON. */
export function encodeFrame(message: object, limit = maxFrameBytes): Buffer {
  const json = JSON.stringify(message);
  const bodyBytes = Buffer.byteLength(json, 'utf8');
  if (bodyBytes > limit) {
    throw new FrameError(`A frame of ${bodyBytes} bytes is over the ${limit}-byte limit.`);
  }
  // One buffer, written once: the header, then the JSON encoded in place.
  const frame = Buffer.allocUnsafe(headerBytes + bodyBytes);
  frame.writeUInt32BE(bodyBytes, 0);
  frame.write(json, headerBytes, 'utf8');
  return frame;
}

/** One decoded frame: its message and the bytes of its JSON body. */
export interface DecodedFrame {
  readonly message: unknown;
  readonly bytes: number;
}

/**
 * Splits a byte stream into frames. Chunks are kept as a list and joined once per frame, so a
 * large frame arriving in many small chunks costs linear time; the declared length is checked
 * against the limit before anything is allocated for it.
 */
export class FrameDecoder {
  readonly #limit: number;
  #chunks: Buffer[] = [];
  #buffered = 0;

  constructor(limit = maxFrameBytes) {
    this.#limit = limit;
  }

  /** Bytes received that are not yet part of a complete frame. */
  get bufferedBytes(): number {
    return this.#buffered;
  }

  /** Adds bytes and returns the messages they complete. Throws {@link FrameError} on a bad frame. */
  push(chunk: Buffer): unknown[] {
    return this.pushFrames(chunk).map((frame) => frame.message);
  }

  /** As {@link push}, with each message's size on the wire. */
  pushFrames(chunk: Buffer): DecodedFrame[] {
    this.#chunks.push(chunk);
    this.#buffered += chunk.length;
    const frames: DecodedFrame[] = [];
    while (this.#buffered >= headerBytes) {
      const length = this.#peekLength();
      if (length > this.#limit) {
        throw new FrameError(`A frame declared ${length} bytes, over the ${this.#limit}-byte limit.`);
      }
      if (this.#buffered < headerBytes + length) break;
      frames.push({ message: this.#takeMessage(length), bytes: length });
    }
    return frames;
  }

  #peekLength(): number {
    const first = this.#chunks[0] as Buffer;
    if (first.length >= headerBytes) return first.readUInt32BE(0);
    this.#chunks = [Buffer.concat(this.#chunks)];
    return (this.#chunks[0] as Buffer).readUInt32BE(0);
  }

  /** Parses the frame whose body of `length` bytes is complete at the front, and drops its bytes. */
  #takeMessage(length: number): unknown {
    const joined = this.#chunks.length === 1 ? (this.#chunks[0] as Buffer) : Buffer.concat(this.#chunks);
    const end = headerBytes + length;
    // The body is read where it lies: no view of the frame or its body is made per frame.
    const rest = joined.length - end;
    this.#chunks = rest > 0 ? [joined.subarray(end)] : [];
    this.#buffered = rest;
    return parseBody(joined, headerBytes, end);
  }
}

function parseBody(bytes: Buffer, start: number, end: number): unknown {
  let message: unknown;
  try {
    message = JSON.parse(bytes.toString('utf8', start, end));
  } catch (error) {
    // A SyntaxError, or a RangeError where the engine's parser runs out of stack on deep nesting.
    throw new FrameError(`A frame is not valid JSON: ${(error as Error).message.slice(0, 200)}`);
  }
  if (typeof message !== 'object' || message === null || Array.isArray(message)) {
    throw new FrameError('A frame must hold a JSON object.');
  }
  return message;
}
