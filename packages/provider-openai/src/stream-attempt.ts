import type { ModelStreamPart } from '@ghost/core/provider';
import { ModelError, modelStreamError } from '@ghost/core/provider';
import { type FailureContext, openFailure, streamFailure } from './openai-failure.js';

/** Reads one API's stream events into Ghost's parts. */
export interface StreamEventReader<Event> {
  /** The parts one event produces; throws a `ModelError` for a failure the provider reported. */
  read(event: Event): ModelStreamPart[];
  /** True once the stream's terminal event was read: nothing after it matters. */
  readonly isFinished: boolean;
  /** The parts that close the answer; throws a `ModelResponseError` when it never finished. */
  end(): ModelStreamPart[];
}

/**
 * One attempt at a streamed request: opens it, reads its events, and ends with the reader's
 * closing parts. Every failure comes out as a `ModelError` (or the signal's reason on abort):
 * opening failures from the HTTP status, broken streams as `ModelResponseError`. The SDK ends a
 * stream quietly when its request is aborted, so an abort is checked for before declaring the
 * stream complete.
 */
export async function* streamAttempt<Event>(
  open: (signal: AbortSignal) => Promise<AsyncIterable<Event>>,
  reader: StreamEventReader<Event>,
  signal: AbortSignal,
  context: FailureContext,
): AsyncGenerator<ModelStreamPart> {
  // The SDK adds an abort listener to the signal it is given and never removes it; a signal of
  // this attempt's own, linked to the caller's while the attempt lasts, keeps a long run's
  // signal from gathering one listener per turn.
  const attempt = new AbortController();
  const forwardAbort = () => attempt.abort(signal.reason);
  signal.addEventListener('abort', forwardAbort, { once: true });
  if (signal.aborted) forwardAbort();
  try {
    yield* readStream(open, reader, attempt.signal, context);
  } finally {
    signal.removeEventListener('abort', forwardAbort);
  }
}

async function* readStream<Event>(
  open: (signal: AbortSignal) => Promise<AsyncIterable<Event>>,
  reader: StreamEventReader<Event>,
  signal: AbortSignal,
  context: FailureContext,
): AsyncGenerator<ModelStreamPart> {
  let events: AsyncIterable<Event>;
  try {
    events = await open(signal);
  } catch (error) {
    throw openFailure(error, signal, context);
  }
  const iterator = events[Symbol.asyncIterator]();
  try {
    while (!reader.isFinished) {
      let step: IteratorResult<Event>;
      try {
        step = await iterator.next();
      } catch (error) {
        throw streamFailure(error, signal, context);
      }
      if (step.done) break;
      yield* readEvent(reader, step.value, context);
    }
  } finally {
    // Closes the HTTP stream when the answer finished early, failed or was abandoned.
    await iterator.return?.()?.catch(() => {});
  }
  if (signal.aborted) throw signal.reason;
  yield* reader.end();
}

function readEvent<Event>(
  reader: StreamEventReader<Event>,
  event: Event,
  context: FailureContext,
): ModelStreamPart[] {
  try {
    return reader.read(event);
  } catch (error) {
    if (ModelError.isInstance(error)) throw error;
    throw modelStreamError(context.provider, 'sent an event Ghost could not read', error);
  }
}
