import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { clientIdentity } from './client-identity.js';
import type { PreparedCodeModeMcp } from './code-mode-mcp.js';
import type { CodeModeMcpServer } from './code-mode-mcp-server.js';
import { sendJsonRpcError } from './json-rpc-error.js';

interface OpenSession {
  /** Who holds it (see {@link clientIdentity}). */
  readonly client: string;
  readonly server: CodeModeMcpServer;
  readonly transport: StreamableHTTPServerTransport;
  requestsInFlight: number;
  lastActivity: number;
}

/** How many client sessions may be open at once: in all, and held by one client. */
export interface HttpSessionLimits {
  readonly maxSessions: number;
  readonly maxSessionsPerClient: number;
}

/**
 * The client sessions (`Mcp-Session-Id`) of one Streamable HTTP server, each with its own MCP
 * server and transport: opened by an initialize request within the limits, and closed when the
 * client ends them, when they stay idle, or all at once.
 */
export class HttpSessions {
  readonly #codeMode: PreparedCodeModeMcp;
  readonly #limits: HttpSessionLimits;
  readonly #sessions = new Map<string, OpenSession>();
  // Sessions being initialised count toward maxSessions (and their client's share) before they have an id.
  #starting = 0;
  readonly #startingByClient = new Map<string, number>();
  /** Each connection's client, found once: a connection carries many requests. */
  readonly #clients = new WeakMap<Socket, Promise<string>>();

  constructor(codeMode: PreparedCodeModeMcp, limits: HttpSessionLimits) {
    this.#codeMode = codeMode;
    this.#limits = limits;
  }

  /** The sessions open now. */
  get size(): number {
    return this.#sessions.size;
  }

  /**
   * Answers a request that names no session: an initialize request opens one, unless the server
   * (503) or this client (429) is at its limit. Anything else leaves no session behind.
   */
  async start(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (this.#isFull()) {
      sendJsonRpcError(response, 503, this.#fullMessage());
      return;
    }
    const client = await this.#clientOf(request.socket);
    // Checked again after the wait, and counted at once, so two requests cannot both take the last place.
    if (this.#isFull() || this.#heldBy(client) >= this.#limits.maxSessionsPerClient) {
      const isOwnLimit = !this.#isFull();
      sendJsonRpcError(
        response,
        isOwnLimit ? 429 : 503,
        isOwnLimit
          ? `This client (${client}) holds ${this.#limits.maxSessionsPerClient} sessions, the most one client may (maxSessionsPerClient): end one of them (DELETE) first.`
          : this.#fullMessage(),
      );
      return;
    }
    this.#reserve(client);
    const server = this.#codeMode.createServer();
    let isRegistered = false;
    try {
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          isRegistered = true;
          this.#sessions.set(id, {
            client,
            server,
            transport,
            requestsInFlight: 1,
            lastActivity: Date.now(),
          });
        },
        onsessionclosed: (id) => this.close(id),
      });
      await server.connect(transport);
      await transport.handleRequest(request, response);
      const id = transport.sessionId;
      const session = id === undefined ? undefined : this.#sessions.get(id);
      if (session !== undefined) {
        session.requestsInFlight -= 1;
        session.lastActivity = Date.now();
      }
    } finally {
      this.#release(client);
      // Not an initialize request, or a failed one: nothing will ever reach this server again.
      if (!isRegistered) await server.close();
    }
  }

  /** Hands a request to the session it names; false, with nothing answered, when there is no such session. */
  async forward(id: string, request: IncomingMessage, response: ServerResponse): Promise<boolean> {
    const session = this.#sessions.get(id);
    if (session === undefined) return false;
    session.requestsInFlight += 1;
    try {
      await session.transport.handleRequest(request, response);
    } finally {
      session.requestsInFlight -= 1;
      session.lastActivity = Date.now();
    }
    return true;
  }

  /** Closes a session with its server and programs; nothing when it is already gone. */
  async close(id: string): Promise<void> {
    const session = this.#sessions.get(id);
    if (session === undefined) return;
    this.#sessions.delete(id);
    await session.server.close();
  }

  /** Closes, in the background, the sessions with no request in flight and none for `idleMs`. */
  closeIdle(idleMs: number): void {
    const now = Date.now();
    for (const [id, session] of this.#sessions) {
      if (session.requestsInFlight === 0 && now - session.lastActivity >= idleMs) {
        // A failure is reported to the options' onError by the session's own server.
        this.close(id).catch(() => {});
      }
    }
  }

  /** Closes every session, and says how each close went. */
  closeAll(): Promise<PromiseSettledResult<void>[]> {
    return Promise.allSettled([...this.#sessions.keys()].map((id) => this.close(id)));
  }

  #isFull(): boolean {
    return this.#sessions.size + this.#starting >= this.#limits.maxSessions;
  }

  #fullMessage(): string {
    return `This server has ${this.#limits.maxSessions} client sessions open, its limit: end one (DELETE) or try again later.`;
  }

  #clientOf(socket: Socket): Promise<string> {
    let client = this.#clients.get(socket);
    if (client === undefined) {
      client = clientIdentity(socket);
      this.#clients.set(socket, client);
    }
    return client;
  }

  /** The sessions a client holds, those it is starting included. */
  #heldBy(client: string): number {
    let held = this.#startingByClient.get(client) ?? 0;
    for (const session of this.#sessions.values()) if (session.client === client) held += 1;
    return held;
  }

  #reserve(client: string): void {
    this.#starting += 1;
    this.#startingByClient.set(client, (this.#startingByClient.get(client) ?? 0) + 1);
  }

  #release(client: string): void {
    this.#starting -= 1;
    const clientStarting = (this.#startingByClient.get(client) ?? 1) - 1;
    if (clientStarting === 0) this.#startingByClient.delete(client);
    else this.#startingByClient.set(client, clientStarting);
  }
}
