import type { ModelStreamLimits } from './model.js';
import { modelStreamLimitError } from './model-error-mapping.js';

const lineFeed = 0x0a;
const carriageReturn = 0x0d;

/**
 * Cuts a response body into whole server-sent events, counting as the bytes arrive: the answer's
 * bytes against `maxAnswerBytes`, each event's against `maxStreamEventBytes`. An event ends where
 * the SDKs' decoders end one (`\n\n`, `\r\r` or `\r\n\r\n`), so each piece handed on is one whole
 * event and a decoder never searches the same pending bytes twice.
 */
class EventSplitter {
  readonly #limits: Pick<ModelStreamLimits, 'maxAnswerBytes' | 'maxStreamEventBytes'>;
  readonly #provider: string;
  /** The pieces of the event still open, kept apart until it ends (no copy per chunk). */
  #held: Uint8Array[] = [];
  #eventBytes = 0;
  #answerBytes = 0;
  /** The last three bytes of the open event, newest first: 1 for `\r`, 2 for `\n`, 0 otherwise. */
  #last = 0;
  #beforeLast = 0;
  #third = 0;

  constructor(limits: Pick<ModelStreamLimits, 'maxAnswerBytes' | 'maxStreamEventBytes'>, provider: string) {
    this.#limits = limits;
    this.#provider = provider;
  }

  /** The whole events `chunk` completes; throws a `ModelResponseError` at a bound. */
  push(chunk: Uint8Array): Uint8Array[] {
    this.#answerBytes += chunk.length;
    if (this.#answerBytes > this.#limits.maxAnswerBytes) {
      throw modelStreamLimitError(this.#provider, 'maxAnswerBytes', this.#limits.maxAnswerBytes);
    }
    const events: Uint8Array[] = [];
    let start = 0;
    // Locals in the loop over every byte; written back after it.
    let last = this.#last;
    let beforeLast = this.#beforeLast;
    let third = this.#third;
    for (let index = 0; index < chunk.length; index += 1) {
      const byte = chunk[index];
      const kind = byte === carriageReturn ? 1 : byte === lineFeed ? 2 : 0;
      const isEnd =
        (kind === 2 && last === 2) ||
        (kind === 1 && last === 1) ||
        (kind === 2 && last === 1 && beforeLast === 2 && third === 1);
      if (!isEnd) {
        third = beforeLast;
        beforeLast = last;
        last = kind;
        continue;
      }
      this.#checkEvent(index + 1 - start);
      events.push(this.#take(chunk.subarray(start, index + 1)));
      start = index + 1;
      last = 0;
      beforeLast = 0;
      third = 0;
    }
    this.#last = last;
    this.#beforeLast = beforeLast;
    this.#third = third;
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.#checkEvent(rest.length);
      this.#held.push(rest);
      this.#eventBytes += rest.length;
    }
    return events;
  }

  /** What is left when the body ends: an event the server never finished, for the SDK to judge. */
  end(): Uint8Array | undefined {
    return this.#held.length === 0 ? undefined : this.#take(new Uint8Array());
  }

  #checkEvent(moreBytes: number): void {
    if (this.#eventBytes + moreBytes > this.#limits.maxStreamEventBytes) {
      throw modelStreamLimitError(this.#provider, 'maxStreamEventBytes', this.#limits.maxStreamEventBytes);
    }
  }

  /** The held pieces and `last` as one array, copied once; the held pieces are let go. */
  #take(last: Uint8Array): Uint8Array {
    if (this.#held.length === 0) return last;
    const whole = new Uint8Array(this.#eventBytes + last.length);
    let offset = 0;
    for (const piece of this.#held) {
      whole.set(piece, offset);
      offset += piece.length;
    }
    whole.set(last, offset);
    this.#held = [];
    this.#eventBytes = 0;
    return whole;
  }
}

/**
 * For model provider authors: bounds a streamed response body as its bytes arrive, before an SDK
 * buffers them. The body is handed on one whole server-sent event at a time, so an SDK's decoder
 * reads each event once (the `openai` SDK's searches its whole pending buffer again for each piece
 * of the network's, so one long event cost time quadratic in its length). The body ends with a
 * `ModelResponseError` naming the bound (`MODEL_STREAM_EVENT_TOO_LARGE`, `MODEL_ANSWER_TOO_LARGE`)
 * as soon as an event passes `maxStreamEventBytes` or the whole passes `maxAnswerBytes`, and the
 * response is cancelled, which closes its connection.
 *
 * @example
 * ```ts
 * // a fetch for the SDK's client, which bounds every event stream it returns
 * const fetchWithLimits: typeof fetch = async (input, init) => {
 *   const response = await fetch(input, init);
 *   if (response.body === null || !response.headers.get('content-type')?.includes('text/event-stream')) return response;
 *   const body = limitServerSentEvents(response.body, defaultModelStreamLimits, 'my-provider');
 *   return new Response(body, response);
 * };
 * ```
 */
export function limitServerSentEvents(
  body: ReadableStream<Uint8Array>,
  limits: Pick<ModelStreamLimits, 'maxAnswerBytes' | 'maxStreamEventBytes'>,
  provider: string,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const splitter = new EventSplitter(limits, provider);
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const read = await reader.read();
        if (read.done) {
          const rest = splitter.end();
          if (rest !== undefined) controller.enqueue(rest);
          controller.close();
          return;
        }
        let events: Uint8Array[];
        try {
          events = splitter.push(read.value);
        } catch (error) {
          await reader.cancel(error).catch(() => {});
          throw error;
        }
        for (const event of events) controller.enqueue(event);
        if (events.length > 0) return;
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}
