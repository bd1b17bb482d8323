import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { sendJsonRpcError } from './json-rpc-error.js';

/** Node's own bound on receiving a whole request, kept: a body trickling in stays bounded by it. */
const defaultRequestTimeoutMs = 300_000;

/** How long a client may keep the server waiting, in milliseconds (see `CodeModeMcpHttpOptions`). */
export interface McpHttpTimeouts {
  readonly headersTimeoutMs: number;
  readonly idleTimeoutMs: number;
}

/**
 * An HTTP server that hands each request to `answer` (a failure becomes a 500), gives up on
 * requests whose headers are slow to come, and closes connections left quiet by their client,
 * never one waiting for the server's answer.
 */
export function createMcpHttpServer(
  timeouts: McpHttpTimeouts,
  answer: (request: IncomingMessage, response: ServerResponse) => Promise<void>,
): Server {
  const { headersTimeoutMs, idleTimeoutMs } = timeouts;
  /** The requests each connection is being answered on, from their headers to their answer's end. */
  const exchanges = new WeakMap<Socket, Set<IncomingMessage>>();
  const httpServer: Server = createServer(
    {
      headersTimeout: headersTimeoutMs,
      // Node requires the whole request's bound to be at least the headers'.
      requestTimeout: Math.max(headersTimeoutMs, defaultRequestTimeoutMs),
      // How often Node looks for requests past those bounds (its default is every 30 s).
      connectionsCheckingInterval: Math.min(1_000, headersTimeoutMs),
    },
    (request, response) => {
      const pending = exchanges.get(request.socket) ?? new Set<IncomingMessage>();
      exchanges.set(request.socket, pending);
      pending.add(request);
      response.once('close', () => pending.delete(request));
      answer(request, response).catch((error: unknown) => {
        sendJsonRpcError(
          response,
          500,
          `The request failed: ${error instanceof Error ? error.message : String(error)}`,
        );
      });
    },
  );
  // A quiet connection is the client's doing unless it waits for an answer to a request it has
  // sent whole (a running program, an event stream): then the silence is ours, and it stays.
  httpServer.setTimeout(idleTimeoutMs, (socket: Socket) => {
    const pending = exchanges.get(socket);
    const isAnswering = pending !== undefined && [...pending].some((request) => request.complete);
    if (!isAnswering) socket.destroy();
  });
  return httpServer;
}
