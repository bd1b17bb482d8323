import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigurationError } from '@ghost/core';
import { CleanupError } from '@ghost/core/plugin';
import { answerMcpRequest } from './answer-mcp-request.js';
import type { PreparedCodeModeMcp } from './code-mode-mcp.js';
import { type HttpServerSettings, resolveHttpServerSettings } from './http-server-settings.js';
import { HttpSessions } from './http-sessions.js';
import { createMcpHttpServer } from './mcp-http-server.js';

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
  const settings = resolveHttpServerSettings(options);
  const sessions = new HttpSessions(codeMode, settings);
  let isClosing = false;
  const endpoint = {
    path: settings.path,
    allowedHostNames: settings.allowedHostNames,
    sessions,
    isClosing: () => isClosing,
  };
  const httpServer = createMcpHttpServer(settings, (request, response) =>
    answerMcpRequest(request, response, endpoint),
  );
  const idleCheck = setInterval(
    () => sessions.closeIdle(settings.sessionIdleMs),
    Math.min(settings.sessionIdleMs, 60_000),
  );
  idleCheck.unref();
  try {
    await listen(httpServer, settings);
  } catch (error) {
    clearInterval(idleCheck);
    throw error;
  }

  let closing: Promise<void> | undefined;
  const close = async (): Promise<void> => {
    isClosing = true;
    clearInterval(idleCheck);
    await closeServer(httpServer, sessions);
  };
  return {
    url: endpointUrl(httpServer, settings.path),
    get sessionCount() {
      return sessions.size;
    },
    close() {
      closing ??= close();
      return closing;
    },
  };
}

/** Starts listening, or throws a `ConfigurationError` saying why it could not. */
async function listen(httpServer: Server, { host, port }: HttpServerSettings): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(port, host, () => {
      httpServer.off('error', reject);
      resolve();
    });
  }).catch((error: unknown) => {
    throw new ConfigurationError(
      `ghost-mcp could not listen on ${host}:${port}: ${(error as Error).message}. Choose another port.`,
      { code: 'GHOST_MCP_HTTP_LISTEN_FAILED', cause: error },
    );
  });
}

/** The endpoint's URL on the address the server listens on. */
function endpointUrl(httpServer: Server, path: string): URL {
  const address = httpServer.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return new URL(`http://${urlHost}:${address.port}${path}`);
}

/**
 * Stops listening and closes every session, then every connection; rejects with a `CleanupError`
 * when a session could not be cleaned up.
 */
async function closeServer(httpServer: Server, sessions: HttpSessions): Promise<void> {
  const stopped = new Promise<void>((resolve) => httpServer.close(() => resolve()));
  const results = await sessions.closeAll();
  httpServer.closeAllConnections();
  await stopped;
  const failures = results.flatMap((result) => (result.status === 'rejected' ? [result.reason] : []));
  if (failures.length > 0) {
    throw new CleanupError(
      `ghost-mcp could not clean up ${failures.length} client session(s): ${failures.map((failure) => (failure as Error).message).join('; ')}`,
      { cause: failures[0] },
    );
  }
}
