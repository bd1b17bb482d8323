import type { ServerResponse } from 'node:http';

/**
 * Answers with a JSON-RPC error not tied to any request (`id: null`), as the MCP transport does;
 * when the answer has already begun, it can only be ended.
 */
export function sendJsonRpcError(response: ServerResponse, status: number, message: string): void {
  if (response.headersSent) {
    response.end();
    return;
  }
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}
