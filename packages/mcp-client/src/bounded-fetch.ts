import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { McpLimitError } from './errors.js';

const lineFeed = 0x0a;
const carriageReturn = 0x0d;

/**
 * Wraps `fetch` so that no message from an MCP server exceeds `maxMessageBytes`: a JSON body is
 * one message, counted whole; an event stream (`text/event-stream`) is counted per event, since
 * a session's stream may rightly carry many messages over its life. Past the cap the body errors
 * with an `McpLimitError` (also given to `onLimit`), so the transport stops reading instead of
 * buffering without bound.
 */
export function boundedFetch(
  maxMessageBytes: number,
  onLimit: (failure: McpLimitError) => void,
  baseFetch: FetchLike = fetch,
): FetchLike {
  return async (url, init) => {
    const response = await baseFetch(url, init);
    if (response.body === null) return response;
    const isEventStream = (response.headers.get('content-type') ?? '').includes('text/event-stream');
    const counted = response.body.pipeThrough(countingStream(maxMessageBytes, isEventStream, onLimit));
    const bounded = new Response(counted, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
    // A constructed Response has no url and was not redirected; the SDK reads both.
    Object.defineProperties(bounded, {
      url: { value: response.url },
      redirected: { value: response.redirected },
    });
    return bounded;
  };
}

function countingStream(
  maxMessageBytes: number,
  isEventStream: boolean,
  onLimit: (failure: McpLimitError) => void,
): TransformStream<Uint8Array> {
  let messageBytes = 0;
  let lineBytes = 0;
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      if (!isEventStream) {
        messageBytes += chunk.byteLength;
      } else {
        for (const byte of chunk) {
          if (byte === lineFeed) {
            // A blank line ends an event: the next one is counted from zero.
            if (lineBytes === 0) messageBytes = 0;
            lineBytes = 0;
          } else if (byte !== carriageReturn) {
            lineBytes += 1;
            messageBytes += 1;
          }
        }
      }
      if (messageBytes > maxMessageBytes) {
        const failure = new McpLimitError(
          `The MCP server sent a message over ${maxMessageBytes} bytes (limits.maxMessageBytes); it was not read. Raise the limit if the server is trusted to send that much.`,
        );
        controller.error(failure);
        onLimit(failure);
        return;
      }
      controller.enqueue(chunk);
    },
  });
}
