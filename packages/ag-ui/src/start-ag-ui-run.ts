import type { IncomingMessage } from 'node:http';
import type { RunAgentInput } from '@ag-ui/core';
import {
  type AskOptions,
  ConfigurationError,
  type ModelMessage,
  type ResumeDecision,
  type RunStream,
  type SessionOptions,
} from '@ghost/core';
import type { AgUiServedAgent } from './ag-ui-handler.js';
import type { AgUiHandlerSettings } from './ag-ui-handler-options.js';
import { AgUiRequestError } from './ag-ui-request-error.js';
import { clientToolNamesOf } from './client-tool-names.js';
import { conversationFromAgUi } from './conversation-from-ag-ui.js';
import type { StartedAgUiRun } from './event-stream-response.js';
import { readRunAgentInput } from './read-run-agent-input.js';
import { resumeDecisions } from './resume-decisions.js';

/**
 * Reads a request and starts its run: a new turn, or (when its `resume` answers interrupts) the
 * session's paused turn continued. Undefined when the client left before the run could start.
 * Throws an {@link AgUiRequestError} for a request refused before any event was sent.
 */
export async function startAgUiRun(
  agent: AgUiServedAgent,
  settings: AgUiHandlerSettings,
  request: IncomingMessage,
  disconnect: AbortController,
): Promise<StartedAgUiRun | undefined> {
  const input = await readRunAgentInput(request, settings.maxBodyBytes);
  // A request that answers interrupts continues the paused turn; its messages are not new input.
  const decisions =
    input.resume === undefined || input.resume.length === 0 ? undefined : resumeDecisions(input.resume);
  // A resume may come without messages: the session holds the thread.
  const conversation =
    decisions !== undefined && input.messages.length === 0
      ? []
      : conversationFromAgUi(input.messages, {
          systemMessages: settings.systemMessages,
          ...(settings.toolResults === 'all' ? {} : { clientToolNames: clientToolNamesOf(input, agent) }),
        });
  const applicationOptions = await applicationAskOptions(settings, { input, conversation, request });
  const session = applicationOptions.session ?? (await sessionOf(settings, input, request));
  // A client that left while the body was read or the hooks ran gets no run.
  if (disconnect.signal.aborted) return undefined;
  const runOptions = runOptionsOf(settings, input, applicationOptions, session, disconnect.signal);
  let stream: RunStream;
  try {
    stream =
      decisions === undefined
        ? // With a session the server holds the thread: only the client's new messages are input.
          agent.streamAsk(session === undefined ? conversation : newMessagesOf(conversation), runOptions)
        : streamResumeOf(agent, session, decisions, runOptions);
  } catch (error) {
    throw runStartRefusal(error);
  }
  return { input, stream, disconnect };
}

async function applicationAskOptions(
  settings: AgUiHandlerSettings,
  runRequest: { input: RunAgentInput; conversation: readonly ModelMessage[]; request: IncomingMessage },
): Promise<AskOptions> {
  if (settings.askOptions === undefined) return {};
  try {
    return await settings.askOptions(runRequest);
  } catch (error) {
    if (AgUiRequestError.isInstance(error)) throw error;
    throw new AgUiRequestError("The application's askOptions hook failed, so the run did not start.", {
      status: 500,
      code: 'AG_UI_HANDLER_FAILED',
      cause: error,
    });
  }
}

/** The session of a request's thread, `{ id: threadId, actor }`, when the handler keeps sessions. */
async function sessionOf(
  settings: AgUiHandlerSettings,
  input: RunAgentInput,
  request: IncomingMessage,
): Promise<SessionOptions | undefined> {
  if (settings.actor === undefined) return undefined;
  let id: unknown;
  try {
    id = await settings.actor({ input, request });
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

/** The run's options: the application's, over the handler's approvals, with the AG-UI ids added. */
function runOptionsOf(
  settings: AgUiHandlerSettings,
  input: RunAgentInput,
  applicationOptions: AskOptions,
  session: SessionOptions | undefined,
  disconnected: AbortSignal,
): AskOptions {
  const signal =
    applicationOptions.signal === undefined
      ? disconnected
      : AbortSignal.any([applicationOptions.signal, disconnected]);
  const agUi = { threadId: input.threadId, runId: input.runId };
  return {
    ...(settings.approvals === undefined ? {} : { approvals: settings.approvals }),
    ...applicationOptions,
    ...(session === undefined ? {} : { session }),
    signal,
    context: {
      agUi: { ...agUi, state: input.state, context: input.context, forwardedProps: input.forwardedProps },
      ...applicationOptions.context,
    },
    metadata: { agUi, ...applicationOptions.metadata },
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

/** Why the agent refused to start a run, as the refusal the client gets. */
function runStartRefusal(error: unknown): AgUiRequestError {
  if (AgUiRequestError.isInstance(error)) return error;
  if (
    ConfigurationError.isInstance(error) &&
    (error.code === 'AGENT_INPUT_INVALID' || error.code === 'SESSION_OPTION_INVALID')
  ) {
    return new AgUiRequestError(error.message, { cause: error });
  }
  // A mistake in the server's own options (an unknown ask option, say): its message names the
  // option, which helps whoever deploys the server and tells a browser nothing secret.
  const reason = ConfigurationError.isInstance(error) ? `: ${error.message}` : '.';
  return new AgUiRequestError(`The agent could not start a run${reason}`, {
    status: 500,
    code: 'AG_UI_HANDLER_FAILED',
    cause: error,
  });
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
