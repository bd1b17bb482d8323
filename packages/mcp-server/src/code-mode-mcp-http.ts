import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { CleanupError, ConfigurationError } from '@ghost/core';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { clientIdentity } from './client-identity.js';
import type { PreparedCodeModeMcp } from './code-mode-mcp.js';
import type { CodeModeMcpServer } from './code-mode-mcp-server.js';
import { loopbackHostNames, requestOriginProblem } from './request-origin-check.js';

/** The options of {@link listenCodeModeMcpHttp}. */
export interface CodeModeMcpHttpOptions {
  /** The address to listen on. Default `'127.0.0.1'`: only this machine can connect. */
  readonly host?: string;
  /** The port. Default 0: any free port (read it from `url`). */
  readonly port?: number;
  /** The path of the MCP endpoint. Default `'/mcp'`. */
  readonly path?: string;
  /**
   * Host names (without port) the `Host` and `Origin` headers may name, to block DNS rebinding.
   * Default: `localhost`, `127.0.0.1`, `[::1]` and `host` itself.
   */
  readonly allowedHostNames?: readonly string[];
  /** Client sessions open at once; more are refused with 503 until one ends. Default 32. */
  readonly maxSessions?: number;
  /**
   * Client sessions one client may hold at once; more are refused with 429 until one of its own
   * ends, so no client can take every session. A client is a user of this machine for a local
   * connection (on Linux), else an address. Default 8.
   */
  readonly maxSessionsPerClient?: number;
  /**
   * How long a request's headers may take to arrive, in milliseconds; a slower request is answered
   * 408 and its connection closed. Default 10,000.
   */
  readonly headersTimeoutMs?: number;
  /**
   * A connection on which nothing has moved for this long, in milliseconds, is closed, unless the
   * server is answering one of its requests (a program still running, an event stream). Default
   * 30,000.
   */
  readonly idleTimeoutMs?: number;
  /**
   * A session with no request in flight and none for this long is closed, with its programs.
   * Default 1,800 (30 minutes): clients that vanish without ending their session do not leave
   * sessions behind forever.
   */
  readonly sessionIdleSeconds?: number;
}

/** A listening Streamable HTTP server for code mode, made by {@link listenCodeModeMcpHttp}. */
export interface CodeModeMcpHttpServer {
  /** The endpoint's URL, such as `http://127.0.0.1:3917/mcp`. */
  readonly url: URL;
  /** The client sessions open now. */
  readonly sessionCount: number;
  /**
   * Stops listening and closes every session with its programs, processes and workspaces.
   * Rejects with a `CleanupError` when one could not be cleaned up.
   */
  close(): Promise<void>;
}

/** Node's own bound on receiving a whole request, kept: a body trickling in stays bounded by it. */
const defaultRequestTimeoutMs = 300_000;

interface OpenSession {
  /** Who holds it (see {@link clientIdentity}). */
  readonly client: string;
  readonly server: CodeModeMcpServer;
  readonly transport: StreamableHTTPServerTransport;
  requestsInFlight: number;
  lastActivity: number;
}

function sendJsonRpcError(response: ServerResponse, status: number, message: string): void {
  if (response.headersSent) {
    response.end();
    return;
  }
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function checkPositiveInteger(value: number | undefined, name: string, allowZero = false): void {
  if (value === undefined) return;
  if (!Number.isInteger(value) || value < (allowZero ? 0 : 1)) {
    throw new ConfigurationError(
      `listenCodeModeMcpHttp(): ${name} is a whole number ${allowZero ? 'of 0 or more' : 'greater than 0'}, not ${String(value)}.`,
      { code: 'GHOST_MCP_HTTP_OPTION_INVALID', option: name },
    );
  }
}

/**
 * Serves code mode over Streamable HTTP: each client session (`Mcp-Session-Id`) gets its own
 * server and code-mode session, closed when the client ends the session (`DELETE`), when it stays
 * idle for `sessionIdleSeconds`, or when this server closes. Listens on 127.0.0.1 by default and
 * refuses requests whose `Host` or `Origin` names another host, as DNS rebinding would.
 *
 * @example
 * ```ts
 * const codeMode = await prepareCodeModeMcp({ tools: [lookup] });
 * const http = await listenCodeModeMcpHttp(codeMode, { port: 3917 });
 * console.log(`MCP endpoint: ${http.url}`); // http://127.0.0.1:3917/mcp
 * ```
 */
export async function listenCodeModeMcpHttp(
  codeMode: PreparedCodeModeMcp,
  options: CodeModeMcpHttpOptions = {},
): Promise<CodeModeMcpHttpServer> {
  checkPositiveInteger(options.port, 'port', true);
  checkPositiveInteger(options.maxSessions, 'maxSessions');
  checkPositiveInteger(options.sessionIdleSeconds, 'sessionIdleSeconds');
  checkPositiveInteger(options.maxSessionsPerClient, 'maxSessionsPerClient');
  checkPositiveInteger(options.headersTimeoutMs, 'headersTimeoutMs');
  checkPositiveInteger(options.idleTimeoutMs, 'idleTimeoutMs');
  const host = options.host ?? '127.0.0.1';
  const path = options.path ?? '/mcp';
  const maxSessions = options.maxSessions ?? 32;
  const maxSessionsPerClient = options.maxSessionsPerClient ?? 8;
  const headersTimeoutMs = options.headersTimeoutMs ?? 10_000;
  const idleTimeoutMs = options.idleTimeoutMs ?? 30_000;
  const idleMs = (options.sessionIdleSeconds ?? 1_800) * 1000;
  const allowedHostNames = options.allowedHostNames ?? [
    ...loopbackHostNames,
    ...(host.includes(':') ? [`[${host}]`] : [host]),
  ];
  const sessions = new Map<string, OpenSession>();
  // Sessions being initialised count toward maxSessions (and their client's share) before they have an id.
  let starting = 0;
  const startingByClient = new Map<string, number>();
  let isClosing = false;
  /** Each connection's client, found once: a connection carries many requests. */
  const clients = new WeakMap<Socket, Promise<string>>();
  const clientOf = (socket: Socket): Promise<string> => {
    let client = clients.get(socket);
    if (client === undefined) {
      client = clientIdentity(socket);
      clients.set(socket, client);
    }
    return client;
  };
  const sessionsOf = (client: string): number => {
    let held = startingByClient.get(client) ?? 0;
    for (const session of sessions.values()) if (session.client === client) held += 1;
    return held;
  };

  const closeSession = async (id: string): Promise<void> => {
    const session = sessions.get(id);
    if (session === undefined) return;
    sessions.delete(id);
    await session.server.close();
  };

  const closeInBackground = (id: string) => {
    // A failure is reported to the options' onError by the session's own server.
    closeSession(id).catch(() => {});
  };

  const startSession = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    if (sessions.size + starting >= maxSessions) {
      sendJsonRpcError(
        response,
        503,
        `This server has ${maxSessions} client sessions open, its limit: end one (DELETE) or try again later.`,
      );
      return;
    }
    const client = await clientOf(request.socket);
    // Checked again after the wait, and counted at once, so two requests cannot both take the last place.
    if (sessions.size + starting >= maxSessions || sessionsOf(client) >= maxSessionsPerClient) {
      const isOwnLimit = sessions.size + starting < maxSessions;
      sendJsonRpcError(
        response,
        isOwnLimit ? 429 : 503,
        isOwnLimit
          ? `This client (${client}) holds ${maxSessionsPerClient} sessions, the most one client may (maxSessionsPerClient): end one of them (DELETE) first.`
          : `This server has ${maxSessions} client sessions open, its limit: end one (DELETE) or try again later.`,
      );
      return;
    }
    starting += 1;
    startingByClient.set(client, (startingByClient.get(client) ?? 0) + 1);
    const server = codeMode.createServer();
    let isRegistered = false;
    try {
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          isRegistered = true;
          sessions.set(id, { client, server, transport, requestsInFlight: 1, lastActivity: Date.now() });
        },
        onsessionclosed: (id) => closeSession(id),
      });
      await server.connect(transport);
      await transport.handleRequest(request, response);
      const id = transport.sessionId;
      const session = id === undefined ? undefined : sessions.get(id);
      if (session !== undefined) {
        session.requestsInFlight -= 1;
        session.lastActivity = Date.now();
      }
    } finally {
      starting -= 1;
      const clientStarting = (startingByClient.get(client) ?? 1) - 1;
      if (clientStarting === 0) startingByClient.delete(client);
      else startingByClient.set(client, clientStarting);
      // Not an initialize request, or a failed one: nothing will ever reach this server again.
      if (!isRegistered) await server.close();
    }
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const requestPath = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (requestPath !== path) {
      sendJsonRpcError(response, 404, `Not found: the MCP endpoint is ${path}.`);
      return;
    }
    const problem = requestOriginProblem(
      headerValue(request.headers.host),
      headerValue(request.headers.origin),
      allowedHostNames,
    );
    if (problem !== undefined) {
      sendJsonRpcError(response, 403, problem);
      return;
    }
    if (isClosing) {
      sendJsonRpcError(response, 503, 'This server is shutting down.');
      return;
    }
    const id = headerValue(request.headers['mcp-session-id']);
    if (id === undefined) {
      if (request.method !== 'POST') {
        sendJsonRpcError(response, 400, 'Start a session with an initialize request (POST) first.');
        return;
      }
      await startSession(request, response);
      return;
    }
    const session = sessions.get(id);
    if (session === undefined) {
      sendJsonRpcError(response, 404, 'No such session: it ended or never existed. Initialize a new one.');
      return;
    }
    session.requestsInFlight += 1;
    try {
      await session.transport.handleRequest(request, response);
    } finally {
      session.requestsInFlight -= 1;
      session.lastActivity = Date.now();
    }
  };

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
      handle(request, response).catch((error: unknown) => {
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

  const idleCheck = setInterval(
    () => {
      const now = Date.now();
      for (const [id, session] of sessions) {
        if (session.requestsInFlight === 0 && now - session.lastActivity >= idleMs) closeInBackground(id);
      }
    },
    Math.min(idleMs, 60_000),
  );
  idleCheck.unref();

  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(options.port ?? 0, host, () => {
      httpServer.off('error', reject);
      resolve();
    });
  }).catch((error: unknown) => {
    clearInterval(idleCheck);
    throw new ConfigurationError(
      `ghost-mcp could not listen on ${host}:${options.port ?? 0}: ${(error as Error).message}. Choose another port.`,
      { code: 'GHOST_MCP_HTTP_LISTEN_FAILED', cause: error },
    );
  });
  const address = httpServer.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = new URL(`http://${urlHost}:${address.port}${path}`);

  let closing: Promise<void> | undefined;
  const close = async (): Promise<void> => {
    isClosing = true;
    clearInterval(idleCheck);
    const stopped = new Promise<void>((resolve) => httpServer.close(() => resolve()));
    const results = await Promise.allSettled([...sessions.keys()].map((id) => closeSession(id)));
    httpServer.closeAllConnections();
    await stopped;
    const failures = results.flatMap((result) => (result.status === 'rejected' ? [result.reason] : []));
    if (failures.length > 0) {
      throw new CleanupError(
        `ghost-mcp could not clean up ${failures.length} client session(s): ${failures.map((failure) => (failure as Error).message).join('; ')}`,
        { cause: failures[0] },
      );
    }
  };

  return {
    url,
    get sessionCount() {
      return sessions.size;
    },
    close() {
      closing ??= close();
      return closing;
    },
  };
}
