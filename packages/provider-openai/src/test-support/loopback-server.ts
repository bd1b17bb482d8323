import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the server received, as the test asserts on it. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: request bodies are asserted field by field in tests
  readonly body: any;
  /** Resolves when the client's connection for this request closed (early or after the end). */
  readonly closed: Promise<void>;
  /** True once the reply finished writing; false if the client went away first. */
  readonly isReplyFinished: () => boolean;
}

/** How the server answers one request. */
export type Reply = (response: ServerResponse, request: RecordedRequest) => Promise<void> | void;

/** How a scripted stream ends. */
export interface StreamEnding {
  /** Write half an event after the others, then close (`end`) or reset (`destroy`) the connection. */
  readonly cut?: 'end' | 'destroy';
  /** Keep the connection open after the events, until the client closes it. */
  readonly hang?: boolean;
}

function frame(event: string | undefined, data: string): string {
  return `${event === undefined ? '' : `event: ${event}\n`}data: ${data}\n\n`;
}

function finishStream(response: ServerResponse, ending: StreamEnding, partial: string): void {
  if (ending.cut !== undefined) {
    if (ending.cut === 'end') {
      response.end(partial);
      return;
    }
    // Close the connection without ending the chunked body, once everything before it was
    // handed to the socket: the client reads the events, then loses the connection mid-event.
    response.write(partial, () => {
      response.socket?.destroy();
    });
    return;
  }
  if (!ending.hang) response.end();
}

function startStream(response: ServerResponse): void {
  response.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    'x-request-id': 'req_loopback',
  });
}

/**
 * A Responses API stream as OpenAI sends it: each event an SSE frame with an `event:` line
 * naming its type and a `data:` line with the event, numbered by `sequence_number`.
 */
export function responsesStream(
  events: readonly Record<string, unknown>[],
  ending: StreamEnding = {},
): Reply {
  return (response) => {
    startStream(response);
    events.forEach((event, sequence) => {
      response.write(frame(String(event.type), JSON.stringify({ ...event, sequence_number: sequence })));
    });
    finishStream(response, ending, 'event: response.output_text.delta\ndata: {"type":"response.output_te');
  };
}

/** A Chat Completions stream: `data:` frames of chunks, ending with `data: [DONE]` unless told not to. */
export function chatStream(
  chunks: readonly Record<string, unknown>[],
  ending: StreamEnding & { readonly done?: boolean } = {},
): Reply {
  return (response) => {
    startStream(response);
    for (const chunk of chunks) response.write(frame(undefined, JSON.stringify(chunk)));
    if (ending.done !== false && ending.cut === undefined && !ending.hang)
      response.write(frame(undefined, '[DONE]'));
    finishStream(response, ending, 'data: {"id":"chatcmpl-1","choices":[{"delta":{"content":"he');
  };
}

/** An HTTP error with OpenAI's error body. */
export function errorReply(
  status: number,
  error: { message: string; type?: string; code?: string | null },
  headers: Record<string, string> = {},
): Reply {
  return (response) => {
    response.writeHead(status, {
      'content-type': 'application/json',
      'x-request-id': 'req_failed',
      ...headers,
    });
    response.end(
      JSON.stringify({ error: { type: 'invalid_request_error', code: null, param: null, ...error } }),
    );
  };
}

/**
 * A loopback HTTP server on 127.0.0.1 that records every request (method, path, headers,
 * JSON body) and answers each with the next scripted reply, or a 400 naming the missing
 * script so a test that sends one request too many fails loudly.
 */
export class LoopbackServer {
  readonly requests: RecordedRequest[] = [];
  readonly #server: Server;
  readonly #replies: Reply[] = [];
  #port = 0;

  private constructor() {
    this.#server = createServer((request, response) => {
      this.#handle(request, response).catch((error: unknown) => {
        response.destroy(error as Error);
      });
    });
  }

  static async start(): Promise<LoopbackServer> {
    const instance = new LoopbackServer();
    const server = instance.#server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    instance.#port = (server.address() as AddressInfo).port;
    return instance;
  }

  /** The API base URL, as the SDK takes it: `http://127.0.0.1:<port>/v1`. */
  get baseURL(): string {
    return `http://127.0.0.1:${this.#port}/v1`;
  }

  /** Queues the replies for the next requests, in order. */
  reply(...replies: Reply[]): this {
    this.#replies.push(...replies);
    return this;
  }

  /** Closes the server and every connection still open. */
  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let isFinished = false;
    response.on('finish', () => {
      isFinished = true;
    });
    const closed = new Promise<void>((resolve) => response.on('close', () => resolve()));
    const recorded: RecordedRequest = {
      method: request.method ?? '',
      path: request.url ?? '',
      headers: request.headers,
      body: text === '' ? undefined : JSON.parse(text),
      closed,
      isReplyFinished: () => isFinished,
    };
    this.requests.push(recorded);
    const reply = this.#replies.shift();
    if (reply === undefined) {
      response.writeHead(400, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({ error: { message: `no scripted reply for request ${this.requests.length}` } }),
      );
      return;
    }
    await reply(response, recorded);
  }
}
