import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HttpSessions } from './http-sessions.js';
import { sendJsonRpcError } from './json-rpc-error.js';
import { requestOriginProblem } from './request-origin-check.js';

/** What {@link answerMcpRequest} answers for: one server's MCP endpoint. */
export interface McpEndpoint {
  /** The path of the MCP endpoint, such as `/mcp`. */
  readonly path: string;
  /** Host names the `Host` and `Origin` headers may name. */
  readonly allowedHostNames: readonly string[];
  readonly sessions: HttpSessions;
  /** Whether the server is shutting down, and so refuses every request. */
  isClosing(): boolean;
}

/**
 * Answers one HTTP request to the server: refused when it is for another path, names another
 * host (DNS rebinding) or comes while the server closes; else it opens a session (initialize) or
 * goes to the session its `Mcp-Session-Id` names.
 */
export async function answerMcpRequest(
  request: IncomingMessage,
  response: ServerResponse,
  endpoint: McpEndpoint,
): Promise<void> {
  const requestPath = new URL(request.url ?? '/', 'http://localhost').pathname;
  if (requestPath !== endpoint.path) {
    sendJsonRpcError(response, 404, `Not found: the MCP endpoint is ${endpoint.path}.`);
    return;
  }
  const problem = requestOriginProblem(
    headerValue(request.headers.host),
    headerValue(request.headers.origin),
    endpoint.allowedHostNames,
  );
  if (problem !== undefined) {
    sendJsonRpcError(response, 403, problem);
    return;
  }
  if (endpoint.isClosing()) {
    sendJsonRpcError(response, 503, 'This server is shutting down.');
    return;
  }
  const id = headerValue(request.headers['mcp-session-id']);
  if (id === undefined) {
    if (request.method !== 'POST') {
      sendJsonRpcError(response, 400, 'Start a session with an initialize request (POST) first.');
      return;
    }
    await endpoint.sessions.start(request, response);
    return;
  }
  const isForwarded = await endpoint.sessions.forward(id, request, response);
  if (!isForwarded) {
    sendJsonRpcError(response, 404, 'No such session: it ended or never existed. Initialize a new one.');
  }
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
