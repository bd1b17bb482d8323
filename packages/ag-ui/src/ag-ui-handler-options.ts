import type { IncomingMessage } from 'node:http';
import type { RunAgentInput } from '@ag-ui/core';
import { type AskOptions, ConfigurationError, type ModelMessage } from '@ghost/core';
import type { ConversationFromAgUiOptions } from './conversation-from-ag-ui.js';

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
   * message? } }`, or `status: 'cancelled'`), which continue the paused turn. `'wait'` (default
   * without `actor`): the run waits in process, the page sees `ghost.approval_requested`, and
   * no AG-UI request can answer it, so the call ends after the agent's `limits.approvalTimeoutMs`.
   * `'suspend'` without `actor` is a `ConfigurationError`.
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

/** The options of {@link agUiHandler} with their defaults filled in. */
export interface AgUiHandlerSettings {
  readonly maxBodyBytes: number;
  readonly askOptions: AgUiHandlerOptions['askOptions'];
  readonly systemMessages: NonNullable<AgUiHandlerOptions['systemMessages']>;
  readonly messagesSnapshot: boolean;
  readonly toolResults: NonNullable<AgUiHandlerOptions['toolResults']>;
  readonly actor: AgUiHandlerOptions['actor'];
  /** Undefined without sessions: the run's own default (wait) applies. */
  readonly approvals: AgUiHandlerOptions['approvals'];
}

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

/** Checks {@link agUiHandler}'s options, throwing `ConfigurationError`, and fills in the defaults. */
export function agUiHandlerSettingsOf(options: AgUiHandlerOptions): AgUiHandlerSettings {
  checkOptionNames(options);
  checkHooks(options);
  checkChoices(options);
  const { maxBodyBytes = defaultMaxBodyBytes, actor } = options;
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < 1) {
    throw new ConfigurationError(
      `agUiHandler() maxBodyBytes is ${maxBodyBytes}; use a whole number of bytes, at least 1.`,
    );
  }
  return {
    maxBodyBytes,
    askOptions: options.askOptions,
    systemMessages: options.systemMessages ?? 'ignore',
    messagesSnapshot: options.messagesSnapshot ?? true,
    toolResults: options.toolResults ?? 'client-tools',
    actor,
    approvals: options.approvals ?? (actor === undefined ? undefined : 'suspend'),
  };
}

function checkOptionNames(options: AgUiHandlerOptions): void {
  for (const key of Object.keys(options)) {
    if (!optionKeys.has(key)) {
      throw new ConfigurationError(
        `agUiHandler() has no option '${key}'. Known options: ${[...optionKeys].join(', ')}.`,
        { code: 'OPTION_UNKNOWN', option: key },
      );
    }
  }
}

function checkHooks(options: AgUiHandlerOptions): void {
  if (options.askOptions !== undefined && typeof options.askOptions !== 'function') {
    throw new ConfigurationError('agUiHandler() askOptions must be a function of the request.');
  }
  if (options.actor !== undefined && typeof options.actor !== 'function') {
    throw new ConfigurationError(
      'agUiHandler() actor must be a function of the request that returns the actor id.',
    );
  }
}

function checkChoices(options: AgUiHandlerOptions): void {
  const { systemMessages, toolResults, approvals } = options;
  if (systemMessages !== undefined && systemMessages !== 'ignore' && systemMessages !== 'reject') {
    throw new ConfigurationError(
      `agUiHandler() systemMessages is 'ignore' or 'reject', not ${JSON.stringify(systemMessages)}.`,
    );
  }
  if (toolResults !== undefined && toolResults !== 'client-tools' && toolResults !== 'all') {
    throw new ConfigurationError(
      `agUiHandler() toolResults is 'client-tools' or 'all', not ${JSON.stringify(toolResults)}.`,
    );
  }
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
}
