import { once } from 'node:events';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the server received: what the SDK sent, parsed. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary fields of the request body
  readonly body: any;
}

/** One server-sent event as the Messages API writes it: `event: <name>` then `data: <json>`. */
export interface SseEvent {
  readonly event: string;
  readonly data: unknown;
}

/** What the server answers to one request, in the order they were queued. */
export type ScriptedResponse =
  | {
      readonly kind: 'stream';
      readonly events: readonly SseEvent[];
      /** Raw text written after the events, such as half an event. */
      readonly tail?: string;
      /** After the events (and tail): `end` the response (default), `hold` it open, or `destroy` the socket. */
      readonly ending?: 'end' | 'hold' | 'destroy';
      /** Split the body into chunks of this many bytes, to exercise partial reads. */
      readonly chunkBytes?: number;
    }
  | {
      readonly kind: 'error';
      readonly status: number;
      readonly body: unknown;
      readonly headers?: Readonly<Record<string, string>>;
    };

/** A streamed answer. */
export type ScriptedStream = Extract<ScriptedResponse, { kind: 'stream' }>;

function sseText(events: readonly SseEvent[]): string {
  return events.map(({ event, data }) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join('');
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A loopback HTTP server that speaks Anthropic's Messages API as documented: `POST /v1/messages`
 * with `stream: true` answered by `text/event-stream` events, or an HTTP error with the API's
 * error body. It records every request and replays queued responses in order; a request with
 * nothing queued gets a 500 so a test cannot pass by accident.
 */
export class MessagesServer {
  readonly requests: RecordedRequest[] = [];
  readonly #server: Server;
  readonly #queue: ScriptedResponse[] = [];
  readonly #held = new Set<ServerResponse>();
  #closedStreams = 0;
  #onStreamClosed: (() => void) | undefined;

  private constructor(server: Server) {
    this.#server = server;
  }

  /** Starts a server on 127.0.0.1 at a free port. */
  static async start(): Promise<MessagesServer> {
    const server = createServer();
    const messages = new MessagesServer(server);
    server.on('request', (request, response) => {
      messages.#handle(request, response).catch((error: unknown) => {
        response.destroy(error instanceof Error ? error : new Error(String(error)));
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return messages;
  }

  /** The base URL to give the SDK. */
  get baseURL(): string {
    const { port } = this.#server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  /** Queues the answers to the next requests. */
  enqueue(...responses: ScriptedResponse[]): void {
    this.#queue.push(...responses);
  }

  /** How many streamed responses the client closed before the server ended them. */
  get closedStreams(): number {
    return this.#closedStreams;
  }

  /** Resolves when a held stream has been closed by the client. */
  streamClosed(): Promise<void> {
    return new Promise((resolve) => {
      this.#onStreamClosed = resolve;
    });
  }

  async close(): Promise<void> {
    for (const response of this.#held) response.destroy();
    this.#server.closeAllConnections();
    this.#server.close();
    await once(this.#server, 'close');
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const text = await readBody(request);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
    this.requests.push({
      method: request.method ?? '',
      path: request.url ?? '',
      headers: request.headers,
      body,
    });
    const scripted = this.#queue.shift();
    if (scripted === undefined) {
      response.writeHead(500, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({ type: 'error', error: { type: 'api_error', message: 'nothing scripted' } }),
      );
      return;
    }
    if (scripted.kind === 'error') {
      response.writeHead(scripted.status, {
        'content-type': 'application/json',
        'request-id': `req_${this.requests.length}`,
        // The SDK would retry on its own when told so; Ghost turns its retries off.
        'x-should-retry': 'true',
        ...scripted.headers,
      });
      response.end(JSON.stringify(scripted.body));
      return;
    }
    response.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'request-id': `req_${this.requests.length}`,
    });
    response.flushHeaders();
    const payload = sseText(scripted.events) + (scripted.tail ?? '');
    const size = scripted.chunkBytes ?? payload.length;
    for (let start = 0; start < payload.length; start += size) {
      response.write(payload.slice(start, start + size));
    }
    const ending = scripted.ending ?? 'end';
    if (ending === 'end') {
      response.end();
    } else if (ending === 'destroy') {
      // Let the written bytes reach the client before the connection drops.
      await new Promise((resolve) => setTimeout(resolve, 20));
      response.socket?.destroy();
    } else {
      this.#held.add(response);
      response.on('close', () => {
        this.#held.delete(response);
        if (!response.writableEnded) {
          this.#closedStreams += 1;
          this.#onStreamClosed?.();
        }
      });
    }
  }
}

/** The `message_start` usage fields. */
export interface StartUsage {
  readonly input_tokens: number;
  readonly output_tokens?: number;
  readonly cache_creation_input_tokens?: number | null;
  readonly cache_read_input_tokens?: number | null;
}

/** A content block of a scripted answer, streamed as start, deltas and stop. */
export type ScriptedBlock =
  | { readonly type: 'text'; readonly deltas: readonly string[] }
  | { readonly type: 'thinking'; readonly deltas: readonly string[]; readonly signature: string }
  | { readonly type: 'redacted_thinking'; readonly data: string }
  | {
      readonly type: 'tool_use';
      readonly id: string;
      readonly name: string;
      readonly json: readonly string[];
    };

/** The `message_start` event, as the API sends it. */
export function messageStart(id: string, model: string, usage: StartUsage): SseEvent {
  return {
    event: 'message_start',
    data: {
      type: 'message_start',
      message: {
        id,
        type: 'message',
        role: 'assistant',
        content: [],
        model,
        stop_reason: null,
        stop_sequence: null,
        usage: { output_tokens: 1, ...usage },
      },
    },
  };
}

/** The events of one content block at `index`. */
export function blockEvents(index: number, block: ScriptedBlock): SseEvent[] {
  const start = (content_block: unknown): SseEvent => ({
    event: 'content_block_start',
    data: { type: 'content_block_start', index, content_block },
  });
  const delta = (value: unknown): SseEvent => ({
    event: 'content_block_delta',
    data: { type: 'content_block_delta', index, delta: value },
  });
  const stop: SseEvent = { event: 'content_block_stop', data: { type: 'content_block_stop', index } };
  switch (block.type) {
    case 'text':
      return [
        start({ type: 'text', text: '', citations: null }),
        ...block.deltas.map((text) => delta({ type: 'text_delta', text })),
        stop,
      ];
    case 'thinking':
      return [
        start({ type: 'thinking', thinking: '', signature: '' }),
        ...block.deltas.map((thinking) => delta({ type: 'thinking_delta', thinking })),
        delta({ type: 'signature_delta', signature: block.signature }),
        stop,
      ];
    case 'redacted_thinking':
      return [start({ type: 'redacted_thinking', data: block.data }), stop];
    case 'tool_use':
      return [
        start({ type: 'tool_use', id: block.id, name: block.name, input: {}, caller: { type: 'direct' } }),
        ...block.json.map((partial_json) => delta({ type: 'input_json_delta', partial_json })),
        stop,
      ];
  }
}

/** `message_delta` with the stop reason and the cumulative usage, then `message_stop`. */
export function messageEnd(stopReason: string | null, usage: Record<string, unknown>): SseEvent[] {
  return [
    {
      event: 'message_delta',
      data: { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage },
    },
    { event: 'message_stop', data: { type: 'message_stop' } },
  ];
}

/** A `ping` event, which the API sends at any point of a stream. */
export const ping: SseEvent = { event: 'ping', data: { type: 'ping' } };

/** The options of {@link answer}. */
export interface AnswerOptions {
  readonly id?: string;
  readonly model?: string;
  readonly stopReason?: string | null;
  readonly startUsage?: StartUsage;
  readonly endUsage?: Record<string, unknown>;
}

/** A whole streamed answer made of `blocks`, with pings between them as the API sends. */
export function answer(blocks: readonly ScriptedBlock[], options: AnswerOptions = {}): ScriptedStream {
  const events: SseEvent[] = [
    messageStart(
      options.id ?? 'msg_01',
      options.model ?? 'claude-sonnet-4-5-20250929',
      options.startUsage ?? { input_tokens: 10 },
    ),
    ping,
  ];
  blocks.forEach((block, index) => {
    events.push(...blockEvents(index, block), ping);
  });
  const stopReason =
    options.stopReason === undefined
      ? blocks.some((block) => block.type === 'tool_use')
        ? 'tool_use'
        : 'end_turn'
      : options.stopReason;
  events.push(...messageEnd(stopReason, options.endUsage ?? { output_tokens: 5 }));
  return { kind: 'stream', events };
}

/** The Messages API error body. */
export function errorBody(type: string, message: string): unknown {
  return { type: 'error', error: { type, message }, request_id: 'req_error' };
}
