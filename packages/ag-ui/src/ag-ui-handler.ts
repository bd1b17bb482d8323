import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Event as AgUiEvent, EventType, type RunAgentInput } from '@ag-ui/core';
import { EventEncoder } from '@ag-ui/encoder';
import {
  type Agent,
  type AskOptions,
  CancelledError,
  ConfigurationError,
  GhostError,
  type ModelMessage,
  type ResumeDecision,
  type RunStream,
  type SessionOptions,
} from '@ghost/core';
import { AgUiRequestError } from './ag-ui-request-error.js';
import { type ConversationFromAgUiOptions, conversationFromAgUi } from './conversation-from-ag-ui.js';
import { readRunAgentInput } from './read-run-agent-input.js';
import { resumeDecisions } from './resume-decisions.js';
import { type StreamMediaType, streamMediaTypeOf } from './stream-media-type.js';
import { toAgUiEvents } from './to-ag-ui-events.js';

/** One AG-UI request, as the handler's `askOptions` hook sees it. */
export interface AgUiRunRequest {
  /** The validated `RunAgentInput`. */
  readonly input: RunAgentInput;
  /** The conversation the agent will continue, made from `input.messages`. */
  readonly conversation: readonly ModelMessage[];
  /** The HTTP request (its headers carry the caller's session, say). */
  readonly request: IncomingMessage;
}

/** The options of {@link agUiHandler}. */
export interface AgUiHandlerOptions {
  /** The largest request body read, in bytes; a larger one gets 413. Default 4 MiB. */
  readonly maxBodyBytes?: number;
  /**
   * The options of each run, from the request: the `runtime`, `actorId` (from your session, never
   * from the body), `timeoutMs`, `context`, `metadata`... The handler adds `context.agUi` and
   * `metadata.agUi` (see {@link agUiHandler}) under yours and ties `signal` to the client's
   * connection. Throw an {@link AgUiRequestError} to refuse the request with its status.
   */
  readonly askOptions?: (request: AgUiRunRequest) => AskOptions | Promise<AskOptions>;
  /** What to do with the client's `system` and `developer` messages. Default `'ignore'`. */
  readonly systemMessages?: ConversationFromAgUiOptions['systemMessages'];
  /** Whether a run ends with a `MESSAGES_SNAPSHOT` of its conversation. Default true. */
  readonly messagesSnapshot?: boolean;
  /**
   * Which tool results the client's thread may bring to the model. `'client-tools'` (default):
   * only those of the tools the client owns, the ones it declares in the request's `tools` that
   * are not the agent's; the model reads that any other result was left out
   * (`withheldToolResult`). The agent's tools run on the server, and without this a client could
   * write their results into the thread (a refund that never happened). `'all'`: every result,
   * for an application that checks threads against its own records.
   */
  readonly toolResults?: 'client-tools' | 'all';
  /**
   * Keeps each thread as a session: the trusted actor of a request (from your authentication,
   * never from the body). With it, each run continues the session `{ id: input.threadId, actor }`
   * in the runtime's `sessionStore` (give the runtime through `askOptions`), so the model sees the
   * thread as the server stored it, and only the user messages at the end of the client's thread
   * are new input: a client may send only its new message. A thread of another actor is refused
   * (`RUN_ERROR` with `SESSION_ACCESS_DENIED`). An `askOptions` that returns its own `session`
   * takes precedence.
   */
  readonly actor?: (request: AgUiActorRequest) => string | Promise<string>;
  /**
   * How a call that needs approval waits, with {@link AgUiHandlerOptions.actor} (sessions).
   * `'suspend'` (default with `actor`): the run ends with `RUN_FINISHED` whose outcome is an
   * `interrupt` per pending approval (its id is the approval id), and the client answers with
   * the next request's `resume` entries (`{ interruptId, status: 'resolved', payload: { approved,
   * message? } }`, or `status: 'cancelled'`), which continue the paused turn. `'wait'`: the run
   * waits in the server for an `onApproval` hook. Without `actor` only `'wait'` is possible.
   */
  readonly approvals?: 'wait' | 'suspend';
}

/** What {@link AgUiHandlerOptions.actor} sees of a request. */
export interface AgUiActorRequest {
  /** The validated `RunAgentInput`; its `threadId` is the session id. */
  readonly input: RunAgentInput;
  /** The HTTP request (its headers carry the caller's authentication). */
  readonly request: IncomingMessage;
}

/**
 * What the handler reads of its agent: `streamAsk`, and the agent's tools where it exposes them
 * (an agent from `defineAgent` does), to tell the client's tools from the agent's.
 */
export type AgUiServedAgent = Pick<Agent, 'streamAsk'> &
  Partial<Pick<Agent, 'streamResume' | 'tools' | 'toolSources'>>;

/** A Node `http` request handler serving one agent over AG-UI. It never rejects. */
export type AgUiHandler = (request: IncomingMessage, response: ServerResponse) => Promise<void>;

const defaultMaxBodyBytes = 4 * 1024 * 1024;
const optionKeys = new Set([
  'maxBodyBytes',
  'askOptions',
  'systemMessages',
  'messagesSnapshot',
  'toolResults',
  'actor',
  'approvals',
]);

/** Code mode's control tools: the agent's whenever it runs in code mode, never a client's. */
const codeModeControlNames: readonly string[] = ['exec', 'wait', 'stop'];

/**
 * The tools a request's client owns: those it declares that cannot be the agent's. The agent's
 * plain tools and code mode's controls are its own; an agent with tool sources, whose names are
 * known only once a run starts, or one that does not expose its tools, may own any name, so then
 * the client owns none.
 */
function clientToolNamesOf(input: RunAgentInput, agent: AgUiServedAgent): string[] {
  if (agent.tools === undefined || agent.toolSources === undefined || agent.toolSources.length > 0) return [];
  const agentNames = new Set([...agent.tools.map((tool) => tool.name), ...codeModeControlNames]);
  return input.tools.map((tool) => tool.name).filter((name) => !agentNames.has(name));
}

function checkOptions(options: AgUiHandlerOptions): number {
  for (const key of Object.keys(options)) {
    if (!optionKeys.has(key)) {
      throw new ConfigurationError(
        `agUiHandler() has no option '${key}'. Known options: ${[...optionKeys].join(', ')}.`,
        {
          code: 'OPTION_UNKNOWN',
          option: key,
        },
      );
    }
  }
  const { maxBodyBytes = defaultMaxBodyBytes, askOptions, systemMessages } = options;
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < 1) {
    throw new ConfigurationError(
      `agUiHandler() maxBodyBytes is ${maxBodyBytes}; use a whole number of bytes, at least 1.`,
    );
  }
  if (askOptions !== undefined && typeof askOptions !== 'function') {
    throw new ConfigurationError('agUiHandler() askOptions must be a function of the request.');
  }
  if (systemMessages !== undefined && systemMessages !== 'ignore' && systemMessages !== 'reject') {
    throw new ConfigurationError(
      `agUiHandler() systemMessages is 'ignore' or 'reject', not ${JSON.stringify(systemMessages)}.`,
    );
  }
  if (options.actor !== undefined && typeof options.actor !== 'function') {
    throw new ConfigurationError(
      'agUiHandler() actor must be a function of the request that returns the actor id.',
    );
  }
  const { approvals } = options;
  if (approvals !== undefined && approvals !== 'wait' && approvals !== 'suspend') {
    throw new ConfigurationError(
      `agUiHandler() approvals is 'wait' or 'suspend', not ${JSON.stringify(approvals)}.`,
    );
  }
  if (approvals === 'suspend' && options.actor === undefined) {
    throw new ConfigurationError(
      "agUiHandler() approvals: 'suspend' keeps a paused run in the thread's session; give the actor option too, or use approvals: 'wait'.",
    );
  }
  const { toolResults } = options;
  if (toolResults !== undefined && toolResults !== 'client-tools' && toolResults !== 'all') {
    throw new ConfigurationError(
      `agUiHandler() toolResults is 'client-tools' or 'all', not ${JSON.stringify(toolResults)}.`,
    );
  }
  return maxBodyBytes;
}

/** The facts of a refusal the body carries as `details`: its typed fields, but not its status (that is the answer's). */
function bodyDetails(error: AgUiRequestError): Record<string, unknown> | undefined {
  const facts: Record<string, unknown> = {};
  if (error.maxBodyBytes !== undefined) facts.maxBodyBytes = error.maxBodyBytes;
  if (error.problems !== undefined) facts.problems = error.problems;
  return Object.keys(facts).length === 0 ? undefined : facts;
}

function sendError(
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

/** Writes one chunk, waiting while the client reads slowly; false once the connection is gone. */
async function write(response: ServerResponse, chunk: Uint8Array): Promise<boolean> {
  if (response.destroyed || response.writableEnded) return false;
  if (response.write(chunk)) return true;
  await new Promise<void>((resolve) => {
    const done = () => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
  return !response.destroyed;
}

function isJsonRequest(request: IncomingMessage): boolean {
  const type = request.headers['content-type'];
  if (type === undefined) return (request as { body?: unknown }).body !== undefined;
  const mediaType = type.split(';')[0]?.trim().toLowerCase() ?? '';
  return mediaType === 'application/json' || mediaType.endsWith('+json');
}

/** What the handler knows of a request before its run starts. */
interface PreparedRun {
  readonly input: RunAgentInput;
  readonly stream: RunStream;
  readonly disconnect: AbortController;
}

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
 * (not a valid `RunAgentInput`, messages that make no conversation, or a `resume` payload that is
 * no approval answer). Once the stream has
 * started, failures arrive as `RUN_ERROR`. When the client disconnects, the run is cancelled
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
  const maxBodyBytes = checkOptions(options);
  const {
    systemMessages = 'ignore',
    askOptions,
    messagesSnapshot = true,
    toolResults = 'client-tools',
    actor,
    approvals = actor === undefined ? undefined : 'suspend',
  } = options;

  async function prepare(
    request: IncomingMessage,
    disconnect: AbortController,
  ): Promise<PreparedRun | undefined> {
    const input = await readRunAgentInput(request, maxBodyBytes);
    // A request that answers interrupts continues the paused turn; its messages are not new input.
    const decisions =
      input.resume === undefined || input.resume.length === 0 ? undefined : resumeDecisions(input.resume);
    const conversation = conversationFromAgUi(input.messages, {
      systemMessages,
      ...(toolResults === 'all' ? {} : { clientToolNames: clientToolNamesOf(input, agent) }),
    });
    let applicationOptions: AskOptions = {};
    if (askOptions !== undefined) {
      try {
        applicationOptions = await askOptions({ input, conversation, request });
      } catch (error) {
        if (AgUiRequestError.isInstance(error)) throw error;
        throw new AgUiRequestError("The application's askOptions hook failed, so the run did not start.", {
          status: 500,
          code: 'AG_UI_HANDLER_FAILED',
          cause: error,
        });
      }
    }
    const session = applicationOptions.session ?? (await sessionOf(input, request));
    // A client that left while the body was read or askOptions ran gets no run.
    if (disconnect.signal.aborted) return undefined;
    const signal =
      applicationOptions.signal === undefined
        ? disconnect.signal
        : AbortSignal.any([applicationOptions.signal, disconnect.signal]);
    const agUi = { threadId: input.threadId, runId: input.runId };
    let stream: RunStream;
    try {
      const runOptions: AskOptions = {
        ...(approvals === undefined ? {} : { approvals }),
        ...applicationOptions,
        ...(session === undefined ? {} : { session }),
        signal,
        context: {
          agUi: {
            ...agUi,
            state: input.state,
            context: input.context,
            forwardedProps: input.forwardedProps,
          },
          ...applicationOptions.context,
        },
        metadata: { agUi, ...applicationOptions.metadata },
      };
      stream =
        decisions === undefined
          ? // With a session the server holds the thread: only the client's new messages are input.
            agent.streamAsk(session === undefined ? conversation : newMessagesOf(conversation), runOptions)
          : streamResumeOf(agent, session, decisions, runOptions);
    } catch (error) {
      if (AgUiRequestError.isInstance(error)) throw error;
      if (
        ConfigurationError.isInstance(error) &&
        (error.code === 'AGENT_INPUT_INVALID' || error.code === 'SESSION_OPTION_INVALID')
      ) {
        throw new AgUiRequestError(error.message, { cause: error });
      }
      // A mistake in the server's own options (an unknown ask option, say): its message names the
      // option, which helps whoever deploys the server and tells a browser nothing secret.
      const reason = ConfigurationError.isInstance(error) ? `: ${error.message}` : '.';
      throw new AgUiRequestError(`The agent could not start a run${reason}`, {
        status: 500,
        code: 'AG_UI_HANDLER_FAILED',
        cause: error,
      });
    }
    return { input, stream, disconnect };
  }

  async function sessionOf(
    input: RunAgentInput,
    request: IncomingMessage,
  ): Promise<{ id: string; actor: string } | undefined> {
    if (actor === undefined) return undefined;
    let id: unknown;
    try {
      id = await actor({ input, request });
    } catch (error) {
      if (AgUiRequestError.isInstance(error)) throw error;
      throw new AgUiRequestError("The application's actor hook failed, so the run did not start.", {
        status: 500,
        code: 'AG_UI_HANDLER_FAILED',
        cause: error,
      });
    }
    if (typeof id !== 'string') {
      throw new AgUiRequestError(
        "The application's actor hook returned no actor id, so the run did not start.",
        {
          status: 500,
          code: 'AG_UI_HANDLER_FAILED',
        },
      );
    }
    return { id: input.threadId, actor: id };
  }

  async function streamRun(prepared: PreparedRun, mediaType: StreamMediaType, response: ServerResponse) {
    const { input, stream, disconnect } = prepared;
    const encoder = new EventEncoder(mediaType === 'text/event-stream' ? {} : { accept: mediaType });
    response.writeHead(200, {
      'Content-Type': encoder.getContentType(),
      'Cache-Control': 'no-cache, no-transform',
      'X-Accel-Buffering': 'no',
    });
    response.flushHeaders();
    const events = toAgUiEvents(stream, {
      threadId: input.threadId,
      runId: input.runId,
      inputMessages: input.messages,
      messagesSnapshot,
    });
    try {
      for await (const event of events) {
        if (!(await write(response, encoder.encodeBinary(event)))) break;
      }
    } catch (error) {
      // A fault of this package, not of the run: end the run, and tell the client if it listens.
      disconnect.abort(
        new CancelledError('The AG-UI handler failed while streaming, so the run was cancelled.'),
      );
      const failure: AgUiEvent = {
        type: EventType.RUN_ERROR,
        message: `The server failed while streaming the run: ${GhostError.isInstance(error) ? error.message : 'internal error'}.`,
        code: 'AG_UI_HANDLER_FAILED',
      };
      await write(response, encoder.encodeBinary(failure));
    } finally {
      // Stopping the iteration cancels a run still going; wait until it has released everything.
      await stream.run.catch(() => {});
      response.end();
    }
  }

  return async (request, response) => {
    try {
      if (request.method !== 'POST') {
        sendError(
          response,
          new AgUiRequestError('Send the AG-UI RunAgentInput with POST.', {
            status: 405,
            code: 'AG_UI_METHOD_NOT_ALLOWED',
          }),
          {
            Allow: 'POST',
          },
        );
        return;
      }
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
      // Watched from the start, so a client that leaves before its run starts is seen too.
      const disconnect = new AbortController();
      response.on('close', () => {
        if (!response.writableFinished) {
          disconnect.abort(new CancelledError('The AG-UI client disconnected, so the run was cancelled.'));
        }
      });
      const prepared = await prepare(request, disconnect);
      if (prepared !== undefined) await streamRun(prepared, mediaType, response);
    } catch (error) {
      const refusal = AgUiRequestError.isInstance(error)
        ? error
        : new AgUiRequestError('The AG-UI handler failed before the run started.', {
            status: 500,
            code: 'AG_UI_HANDLER_FAILED',
            cause: error,
          });
      // A body left unread (too large, say) is not read on: the connection closes after the answer.
      const headers: Record<string, string> = request.readableEnded ? {} : { Connection: 'close' };
      sendError(response, refusal, headers);
    }
  };
}

/** Continues the session's paused run with the decisions a request's `resume` entries carry. */
function streamResumeOf(
  agent: AgUiServedAgent,
  session: SessionOptions | undefined,
  decisions: Readonly<Record<string, ResumeDecision>>,
  runOptions: AskOptions,
): RunStream {
  if (session === undefined) {
    throw new AgUiRequestError(
      'This request answers interrupts (resume), but the server keeps no sessions, so there is no paused run to continue.',
      { problems: [{ path: 'resume', message: 'no paused run to continue without sessions' }] },
    );
  }
  if (agent.streamResume === undefined) {
    throw new AgUiRequestError('The served agent cannot resume a paused run (it has no streamResume).', {
      status: 500,
      code: 'AG_UI_HANDLER_FAILED',
    });
  }
  return agent.streamResume({ ...runOptions, session, decisions });
}

/**
 * The messages a client added since the model last answered: the user messages at the end of its
 * thread. The rest (answers, tool calls and their results) came from the server, which keeps them.
 */
function newMessagesOf(conversation: readonly ModelMessage[]): ModelMessage[] {
  let start = conversation.length;
  while (start > 0 && conversation[start - 1]?.role === 'user') start -= 1;
  return conversation.slice(start);
}
