import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Agent, CancelledError } from '@ghost/core';
import { type AgUiHandlerOptions, agUiHandlerSettingsOf } from './ag-ui-handler-options.js';
import { AgUiRequestError } from './ag-ui-request-error.js';
import { streamAgUiRun } from './event-stream-response.js';
import { refusalOf, sendRefusal } from './http-refusal.js';
import { startAgUiRun } from './start-ag-ui-run.js';
import { type StreamMediaType, streamMediaTypeOf } from './stream-media-type.js';

export type { AgUiActorRequest, AgUiHandlerOptions, AgUiRunRequest } from './ag-ui-handler-options.js';

/**
 * What the handler reads of its agent: `streamAsk`; `streamResume`, to continue a run paused for
 * approval (a request without it that answers interrupts gets 500); and the agent's tools where
 * it exposes them, to tell the client's tools from the agent's. An agent from `defineAgent` has
 * them all.
 */
export type AgUiServedAgent = Pick<Agent, 'streamAsk'> &
  Partial<Pick<Agent, 'streamResume' | 'tools' | 'toolSources'>>;

/** A Node `http` request handler serving one agent over AG-UI. It never rejects. */
export type AgUiHandler = (request: IncomingMessage, response: ServerResponse) => Promise<void>;

/**
 * An HTTP handler that serves `agent` to AG-UI clients (`HttpAgent` from `@ag-ui/client`,
 * CopilotKit, ...): `POST` a `RunAgentInput`, get the run's events back as server-sent events
 * (or AG-UI's protobuf encoding, when the `Accept` header prefers it).
 *
 * Each request is one run. Its conversation is the request's `messages` (see
 * {@link conversationFromAgUi}); the run gets `context.agUi` = `{ threadId, runId, state,
 * context, forwardedProps }` (what the client sent: treat it as untrusted input) and
 * `metadata.agUi` = `{ threadId, runId }`. The client's `tools` are not offered to the model: a
 * Ghost agent's tools run on the server. The thread is the client's, so by default it brings the
 * model only the results of the client's own tools (see {@link AgUiHandlerOptions.toolResults}).
 *
 * With sessions ({@link AgUiHandlerOptions.actor}), a call that needs approval ends the run with
 * `RUN_FINISHED` whose outcome is `{ type: 'interrupt', interrupts }`: one interrupt per pending
 * approval, its id the approval id. The client answers in its next request's `resume`
 * (`{ interruptId, status: 'resolved', payload: { approved: true } }`, `{ approved: false,
 * message }`, or `status: 'cancelled'`), which continues the paused turn: that request's
 * messages are not new input. A resume for interrupts no longer pending ends with `RUN_ERROR`
 * `RUN_RESUME_CONFLICT`; a new message while approvals are pending, with `SESSION_BUSY`.
 *
 * Refused requests get a JSON body `{ error: { code, message, details? } }`: 405 (not `POST`),
 * 406 (an `Accept` that allows no event stream), 415 (not JSON), 413 (over `maxBodyBytes`), 400
 * (not a valid `RunAgentInput`, messages that make no conversation, a `resume` payload that is
 * no approval answer, or a `resume` to a handler without sessions). Once the stream has started,
 * failures arrive as `RUN_ERROR`. When the client disconnects, the run is cancelled
 * (its programs and tools are stopped), or never started if it had not yet; the returned promise
 * resolves once the run has ended and released everything it held.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { agUiHandler } from '@ghost/ag-ui';
 *
 * const handler = agUiHandler(agent, {
 *   askOptions: ({ request }) => ({ actorId: userIdFromSession(request), timeoutMs: 120_000 }),
 * });
 * createServer((request, response) => {
 *   if (request.url === '/agent') void handler(request, response);
 *   else response.writeHead(404).end();
 * }).listen(3000);
 * ```
 */
export function agUiHandler(agent: AgUiServedAgent, options: AgUiHandlerOptions = {}): AgUiHandler {
  const settings = agUiHandlerSettingsOf(options);
  return async (request, response) => {
    if (request.method !== 'POST') {
      const refusal = new AgUiRequestError('Send the AG-UI RunAgentInput with POST.', {
        status: 405,
        code: 'AG_UI_METHOD_NOT_ALLOWED',
      });
      sendRefusal(response, refusal, { Allow: 'POST' });
      return;
    }
    try {
      const mediaType = checkedMediaTypeOf(request);
      const disconnect = disconnectOf(response);
      const run = await startAgUiRun(agent, settings, request, disconnect);
      if (run !== undefined) await streamAgUiRun(run, mediaType, response, settings.messagesSnapshot);
    } catch (error) {
      // A body left unread (too large, say) is not read on: the connection closes after the answer.
      const headers: Record<string, string> = request.readableEnded ? {} : { Connection: 'close' };
      sendRefusal(response, refusalOf(error), headers);
    }
  };
}

/** The event encoding the client accepts; refuses a request that accepts none, or is not JSON. */
function checkedMediaTypeOf(request: IncomingMessage): StreamMediaType {
  const mediaType = streamMediaTypeOf(request.headers.accept);
  if (mediaType === undefined) {
    throw new AgUiRequestError(
      "This endpoint answers with an event stream: accept 'text/event-stream' (or AG-UI's protobuf, 'application/vnd.ag-ui.event+proto').",
      { status: 406, code: 'AG_UI_NOT_ACCEPTABLE' },
    );
  }
  if (!isJsonRequest(request)) {
    throw new AgUiRequestError("Send the RunAgentInput as JSON, with 'Content-Type: application/json'.", {
      status: 415,
      code: 'AG_UI_UNSUPPORTED_MEDIA_TYPE',
    });
  }
  return mediaType;
}

/**
 * Aborted when the client disconnects before the answer is finished. Watched from the start, so
 * a client that leaves before its run starts is seen too.
 */
function disconnectOf(response: ServerResponse): AbortController {
  const disconnect = new AbortController();
  response.on('close', () => {
    if (!response.writableFinished) {
      disconnect.abort(new CancelledError('The AG-UI client disconnected, so the run was cancelled.'));
    }
  });
  return disconnect;
}

function isJsonRequest(request: IncomingMessage): boolean {
  const type = request.headers['content-type'];
  if (type === undefined) return (request as { body?: unknown }).body !== undefined;
  const mediaType = type.split(';')[0]?.trim().toLowerCase() ?? '';
  return mediaType === 'application/json' || mediaType.endsWith('+json');
}
