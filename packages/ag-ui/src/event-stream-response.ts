import type { ServerResponse } from 'node:http';
import { type Event as AgUiEvent, EventType, type RunAgentInput } from '@ag-ui/core';
import { EventEncoder } from '@ag-ui/encoder';
import { CancelledError, GhostError, type RunStream } from '@ghost/core';
import type { StreamMediaType } from './stream-media-type.js';
import { toAgUiEvents } from './to-ag-ui-events.js';

/** A run the handler started, with what streaming it needs. */
export interface StartedAgUiRun {
  readonly input: RunAgentInput;
  readonly stream: RunStream;
  /** Aborted when the client disconnects; streaming aborts it too when it fails. */
  readonly disconnect: AbortController;
}

/** Writes one chunk, waiting while the client reads slowly; false once the connection is gone. */
async function write(response: ServerResponse, chunk: Uint8Array): Promise<boolean> {
  if (response.destroyed || response.writableEnded) return false;
  if (response.write(chunk)) return true;
  await new Promise<void>((resolve) => {
    const done = () => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
  return !response.destroyed;
}

/**
 * Streams a started run's events to the client in `mediaType` (server-sent events or AG-UI's
 * protobuf), and resolves once the run has ended and released everything it held.
 */
export async function streamAgUiRun(
  run: StartedAgUiRun,
  mediaType: StreamMediaType,
  response: ServerResponse,
  messagesSnapshot: boolean,
): Promise<void> {
  const { input, stream, disconnect } = run;
  const encoder = new EventEncoder(mediaType === 'text/event-stream' ? {} : { accept: mediaType });
  response.writeHead(200, {
    'Content-Type': encoder.getContentType(),
    'Cache-Control': 'no-cache, no-transform',
    'X-Accel-Buffering': 'no',
  });
  response.flushHeaders();
  const events = toAgUiEvents(stream, {
    threadId: input.threadId,
    runId: input.runId,
    inputMessages: input.messages,
    messagesSnapshot,
  });
  try {
    for await (const event of events) {
      if (!(await write(response, encoder.encodeBinary(event)))) break;
    }
  } catch (error) {
    // A fault of this package, not of the run: end the run, and tell the client if it listens.
    disconnect.abort(
      new CancelledError('The AG-UI handler failed while streaming, so the run was cancelled.'),
    );
    const failure: AgUiEvent = {
      type: EventType.RUN_ERROR,
      message: `The server failed while streaming the run: ${GhostError.isInstance(error) ? error.message : 'internal error'}.`,
      code: 'AG_UI_HANDLER_FAILED',
    };
    await write(response, encoder.encodeBinary(failure));
  } finally {
    // Stopping the iteration cancels a run still going; wait until it has released everything.
    await stream.run.catch(() => {});
    response.end();
  }
}
