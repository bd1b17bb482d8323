import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One server-sent event: `event:` (when named) and `data:` lines. */
export interface SseEvent {
  readonly event?: string;
  /** The data line: an object is sent as JSON, a string as is (`[DONE]`). */
  readonly data: unknown;
}

/** What the server answers to the next request, in order. */
export type ScriptedResponse =
  | {
      readonly kind: 'json';
      readonly status: number;
      readonly headers?: Readonly<Record<string, string>>;
      readonly body: unknown;
    }
  | {
      readonly kind: 'sse';
      readonly events: readonly SseEvent[];
      readonly headers?: Readonly<Record<string, string>>;
      /**
       * After the events: `end` ends the response as a server does, `cut` destroys the socket in
       * the middle of a further event, `hold` keeps the response open until the client goes away.
       */
      readonly ending?: 'end' | 'cut' | 'hold';
    };

/** A request the server received, with a promise that settles when its connection closes. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The body parsed as JSON. */
  readonly body: Record<string, unknown>;
  /** Resolves when the response's connection closed; `true` when the client closed it first. */
  readonly closed: Promise<boolean>;
}

/**
 * A small HTTP server on 127.0.0.1 that replays scripted responses in order and records every
 * request, for driving real AI SDK providers without a network. Scripted server-sent events are
 * written one write per event, exactly as a provider's API frames them.
 */
export class LoopbackServer {
  readonly requests: RecordedRequest[] = [];
  readonly #responses: ScriptedResponse[] = [];
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();

  private constructor(server: Server) {
    this.#server = server;
    server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
  }

  /** Starts a server on an ephemeral loopback port. */
  static async start(responses: readonly ScriptedResponse[] = []): Promise<LoopbackServer> {
    let instance: LoopbackServer | undefined;
    const server = createServer((request, response) => {
      instance?.handle(request.method ?? 'GET', request.url ?? '/', request.headers, request, response);
    });
    instance = new LoopbackServer(server);
    instance.enqueue(...responses);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return instance;
  }

  /** `http://127.0.0.1:<port>`. */
  get origin(): string {
    const { port } = this.#server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  /** Responses for the next requests, in order. */
  enqueue(...responses: ScriptedResponse[]): void {
    this.#responses.push(...responses);
  }

  /** The JSON body of the `index`th request; throws when there was no such request. */
  body(index: number): Record<string, unknown> {
    const request = this.requests[index];
    if (request === undefined)
      throw new Error(`the server received ${this.requests.length} requests, not ${index + 1}`);
    return request.body;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  private handle(
    method: string,
    path: string,
    headers: IncomingHttpHeaders,
    request: NodeJS.ReadableStream,
    response: ServerResponse,
  ): void {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const closed = new Promise<boolean>((resolve) => {
        response.on('close', () => resolve(!response.writableFinished));
      });
      this.requests.push({ method, path, headers, body: text === '' ? {} : JSON.parse(text), closed });
      const scripted = this.#responses.shift();
      if (scripted === undefined) {
        response.writeHead(500, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({ error: { message: 'the test scripted no response for this request' } }),
        );
        return;
      }
      respond(scripted, response);
    });
  }
}

function respond(scripted: ScriptedResponse, response: ServerResponse): void {
  if (scripted.kind === 'json') {
    response.writeHead(scripted.status, { 'content-type': 'application/json', ...scripted.headers });
    response.end(JSON.stringify(scripted.body));
    return;
  }
  response.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    ...scripted.headers,
  });
  response.flushHeaders();
  for (const event of scripted.events) response.write(sseFrame(event));
  switch (scripted.ending ?? 'end') {
    case 'end':
      response.end();
      return;
    case 'cut':
      // Half an event, then the connection drops: what a client sees when a proxy or the
      // provider dies mid-answer.
      response.write('data: {"id":"chatcmpl-cut","choices":[{"index":0,"del', () => {
        response.socket?.destroy();
      });
      return;
    case 'hold':
      return;
  }
}

function sseFrame(event: SseEvent): string {
  const data = typeof event.data === 'string' ? event.data : JSON.stringify(event.data);
  return `${event.event !== undefined ? `event: ${event.event}\n` : ''}data: ${data}\n\n`;
}
