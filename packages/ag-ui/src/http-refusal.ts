import type { ServerResponse } from 'node:http';
import { AgUiRequestError } from './ag-ui-request-error.js';

/** The facts of a refusal the body carries as `details`: its typed fields, but not its status (that is the answer's). */
function bodyDetails(error: AgUiRequestError): Record<string, unknown> | undefined {
  const facts: Record<string, unknown> = {};
  if (error.maxBodyBytes !== undefined) facts.maxBodyBytes = error.maxBodyBytes;
  if (error.problems !== undefined) facts.problems = error.problems;
  return Object.keys(facts).length === 0 ? undefined : facts;
}

/** Answers a refused request with its status and a JSON body `{ error: { code, message, details? } }`. */
export function sendRefusal(
  response: ServerResponse,
  error: AgUiRequestError,
  headers: Record<string, string> = {},
): void {
  if (response.headersSent) {
    response.end();
    return;
  }
  const details = bodyDetails(error);
  const body = JSON.stringify({
    error: {
      code: error.code,
      message: error.message,
      ...(details === undefined ? {} : { details }),
    },
  });
  response.writeHead(error.status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    ...headers,
  });
  response.end(body);
}

/** Any failure before a run started, as the refusal the client gets (500 for what is not one). */
export function refusalOf(error: unknown): AgUiRequestError {
  if (AgUiRequestError.isInstance(error)) return error;
  return new AgUiRequestError('The AG-UI handler failed before the run started.', {
    status: 500,
    code: 'AG_UI_HANDLER_FAILED',
    cause: error,
  });
}
