import { describe, expect, it } from 'vitest';
import { limitServerSentEvents } from './limit-server-sent-events.js';
import { defaultModelStreamLimits } from './model.js';
import { ModelResponseError } from './model-errors.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A body that sends `chunks` and records whether it was cancelled, and why. */
function body(chunks: readonly (string | Uint8Array)[]) {
  const state: { cancelled: unknown; isCancelled: boolean } = { cancelled: undefined, isCancelled: false };
  let next = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[next];
      next += 1;
      if (chunk === undefined) controller.close();
      else controller.enqueue(typeof chunk === 'string' ? encoder.encode(chunk) : chunk);
    },
    cancel(reason) {
      state.isCancelled = true;
      state.cancelled = reason;
    },
  });
  return { stream, state };
}

async function pieces(stream: ReadableStream<Uint8Array>): Promise<string[]> {
  const read: string[] = [];
  for await (const piece of stream) read.push(decoder.decode(piece));
  return read;
}

describe('limitServerSentEvents', () => {
  it('hands on one whole event at a time, whatever the network pieces, with every ending an SDK knows', async () => {
    const events = [
      'event: a\ndata: {"x":1}\n\n',
      'data: crlf\r\n\r\n',
      'data: cr\r\r',
      ': comment\n\n',
      'data: [DONE]\n\n',
    ];
    const text = events.join('');
    // One byte at a time, and all at once.
    const byBytes = body([...text].map((character) => character));
    expect(await pieces(limitServerSentEvents(byBytes.stream, defaultModelStreamLimits, 'test'))).toEqual(
      events,
    );
    const whole = body([text]);
    expect(await pieces(limitServerSentEvents(whole.stream, defaultModelStreamLimits, 'test'))).toEqual(
      events,
    );
  });

  it('passes on what is left of an event the body never finished', async () => {
    const { stream } = body(['data: 1\n\n', 'data: 2\n', 'data: 3']);
    expect(await pieces(limitServerSentEvents(stream, defaultModelStreamLimits, 'test'))).toEqual([
      'data: 1\n\n',
      'data: 2\ndata: 3',
    ]);
  });

  it('ends the body with MODEL_STREAM_EVENT_TOO_LARGE at an event past the bound, and cancels the response', async () => {
    const limits = { ...defaultModelStreamLimits, maxStreamEventBytes: 1024 };
    // An event of exactly the bound passes; one a byte longer, sent in pieces, does not.
    const fits = `data: ${'x'.repeat(1024 - 8)}\n\n`;
    const line = `data: ${'y'.repeat(2000)}`;
    const { stream, state } = body([
      fits,
      line.slice(0, 600),
      line.slice(600, 1200),
      line.slice(1200),
      '\n\n',
    ]);
    const read: string[] = [];
    let failure: unknown;
    try {
      for await (const piece of limitServerSentEvents(stream, limits, 'test'))
        read.push(decoder.decode(piece));
    } catch (error) {
      failure = error;
    }
    expect(read).toEqual([fits]);
    expect(ModelResponseError.isInstance(failure)).toBe(true);
    expect(failure).toMatchObject({
      code: 'MODEL_STREAM_EVENT_TOO_LARGE',
      limit: 'maxStreamEventBytes',
      provider: 'test',
    });
    expect((failure as Error).message).toMatch(/test sent a stream event longer than 1 KiB \(1,024 bytes\)/);
    expect(state.isCancelled).toBe(true);
    expect(state.cancelled).toBe(failure);
  });

  it('ends the body with MODEL_ANSWER_TOO_LARGE once the whole passes the bound', async () => {
    const limits = { ...defaultModelStreamLimits, maxAnswerBytes: 100 };
    const event = 'data: 0123456789\n\n'; // 18 bytes
    const { stream, state } = body(Array.from({ length: 10 }, () => event));
    const failure = await pieces(limitServerSentEvents(stream, limits, 'test')).catch(
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ code: 'MODEL_ANSWER_TOO_LARGE', limit: 'maxAnswerBytes' });
    expect(state.isCancelled).toBe(true);
  });
});
