import type { AssistantMessage, Message, ToolMessage } from '@ag-ui/core';
import type { ModelMessage } from '@ghost/core';
import type { ModelReasoning, ModelToolCall } from '@ghost/core/provider';
import { AgUiRequestError } from './ag-ui-request-error.js';
import { toolContentFromAgUi, userContentFromAgUi } from './content-parts.js';
import { ghostFieldsOf, reasoningFromValue } from './ghost-fields.js';

/** Options of {@link conversationFromAgUi}. */
export interface ConversationFromAgUiOptions {
  /**
   * What to do with `system` and `developer` messages from the client. The agent's own
   * instructions are the system prompt; a browser must not be able to replace or extend them, so
   * by default these messages are left out (`'ignore'`). `'reject'` refuses the request instead.
   */
  readonly systemMessages?: 'ignore' | 'reject';
  /**
   * The tools whose results the thread may carry, by name: the client's own, which it ran. When
   * given, a `tool` message answering a call of any other tool is not taken, and the model reads
   * {@link withheldToolResult} in its place, since a client could otherwise write the result of a
   * tool that runs on the server (a refund that never happened). Default: every result is taken.
   */
  readonly clientToolNames?: readonly string[];
}

/** The text Ghost gives the model for a call whose result never came (its run ended first). */
export const unansweredToolCallResult =
  'This tool call has no result: the run that made it ended before the call finished.';

/** The text the model reads in place of a result the client sent for a tool it does not own. */
export const withheldToolResult =
  "This tool call's result is not shown: the thread came from the client, and this server does not take the results of its own tools from a client.";

function collectBrokeredCalls(messages: readonly Message[]): Set<string> {
  const callIds = new Set<string>();
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    for (const call of message.toolCalls ?? []) callIds.add(call.id);
  }
  const brokered = new Set<string>();
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    for (const call of message.toolCalls ?? []) {
      const parent = ghostFieldsOf(call.metadata).parentToolCallId;
      if (parent !== undefined && callIds.has(parent)) brokered.add(call.id);
    }
  }
  return brokered;
}

function toolCallsOf(message: AssistantMessage, brokered: ReadonlySet<string>): ModelToolCall[] {
  const calls: ModelToolCall[] = [];
  for (const call of message.toolCalls ?? []) {
    if (brokered.has(call.id)) continue;
    calls.push({ id: call.id, name: call.function.name, arguments: call.function.arguments });
  }
  return calls;
}

function toolMessageOf(message: ToolMessage, toolName: string, where: string): ModelMessage {
  const { content, artifacts } = toolContentFromAgUi(message.content, where);
  const isError = message.error !== undefined || ghostFieldsOf(message.metadata).isError === true;
  return {
    role: 'tool',
    toolCallId: message.toolCallId,
    toolName,
    content: content === '' && message.error !== undefined ? message.error : content,
    ...(isError ? { isError: true } : {}),
    ...(artifacts.length > 0 ? { artifacts } : {}),
  };
}

/**
 * An AG-UI thread's messages as the conversation a Ghost agent continues.
 *
 * - `user` messages keep their text or parts (images, and documents, audio and video as files);
 *   `assistant` messages their text and tool calls; `tool` messages their result, with `error`
 *   marking a failure.
 * - `reasoning` messages Ghost produced go back to the assistant message after them, with what
 *   their provider needs (signatures, encrypted reasoning) from `encryptedValue`; other reasoning
 *   messages are left out, since no model could be sent them.
 * - Messages attributed to an agent nested in a run (`subagentRunId`, from a run streamed with
 *   `includeAgentEvents`) are left out: the model saw that agent's answer as its tool call's result.
 * - `activity` messages are the UI's own and are left out; `system` and `developer` messages are
 *   left out or refused (see {@link ConversationFromAgUiOptions.systemMessages}).
 * - Calls a code-mode program made are left out when the thread holds the `exec` call they ran
 *   under: the model saw that call and its result, not them.
 * - A tool call with no result (its run was cancelled, say) gets one saying so, because every
 *   provider requires each call to be answered.
 * - With `clientToolNames`, only results of those tools are taken; others read
 *   {@link withheldToolResult} (see {@link ConversationFromAgUiOptions.clientToolNames}).
 *
 * Throws {@link AgUiRequestError} (status 400) when a message cannot be converted.
 */
export function conversationFromAgUi(
  messages: readonly Message[],
  options: ConversationFromAgUiOptions = {},
): ModelMessage[] {
  const brokered = collectBrokeredCalls(messages);
  const clientTools = options.clientToolNames === undefined ? undefined : new Set(options.clientToolNames);
  const conversation: ModelMessage[] = [];
  let reasoning: ModelReasoning[] = [];
  let unanswered = new Map<string, string>();
  const answerTheRest = () => {
    for (const [toolCallId, toolName] of unanswered) {
      conversation.push({
        role: 'tool',
        toolCallId,
        toolName,
        content: unansweredToolCallResult,
        isError: true,
      });
    }
    unanswered = new Map();
  };
  for (const [index, message] of messages.entries()) {
    const where = `messages[${index}]`;
    // A nested agent's own messages: the model saw its answer as the result of the call that ran it.
    if (message.subagentRunId !== undefined) continue;
    switch (message.role) {
      case 'system':
      case 'developer':
        if (options.systemMessages === 'reject') {
          throw new AgUiRequestError(
            `${where} is a ${message.role} message; this agent takes its instructions from the server, so send user messages only.`,
          );
        }
        break;
      case 'activity':
        break;
      case 'reasoning': {
        const kept = reasoningFromValue(message.content, message.encryptedValue);
        if (kept) reasoning.push(kept);
        break;
      }
      case 'user':
        answerTheRest();
        reasoning = [];
        conversation.push({
          role: 'user',
          content:
            typeof message.content === 'string'
              ? message.content
              : userContentFromAgUi(message.content, where),
        });
        break;
      case 'assistant': {
        answerTheRest();
        const toolCalls = toolCallsOf(message, brokered);
        const content = message.content ?? '';
        const before = reasoning;
        reasoning = [];
        // An assistant message that held only a program's calls says nothing to the model.
        if (content === '' && toolCalls.length === 0 && before.length === 0) break;
        conversation.push({
          role: 'assistant',
          content,
          ...(toolCalls.length > 0 ? { toolCalls } : {}),
          ...(before.length > 0 ? { reasoning: before } : {}),
        });
        unanswered = new Map(toolCalls.map((call) => [call.id, call.name]));
        break;
      }
      case 'tool': {
        if (brokered.has(message.toolCallId)) break;
        const toolName = unanswered.get(message.toolCallId);
        if (toolName === undefined) {
          throw new AgUiRequestError(
            `${where} answers tool call '${message.toolCallId}', which the assistant message before it did not make (or which was already answered).`,
          );
        }
        unanswered.delete(message.toolCallId);
        conversation.push(
          clientTools === undefined || clientTools.has(toolName)
            ? toolMessageOf(message, toolName, where)
            : { role: 'tool', toolCallId: message.toolCallId, toolName, content: withheldToolResult },
        );
        break;
      }
    }
  }
  answerTheRest();
  if (conversation.length === 0) {
    throw new AgUiRequestError(
      'The request has no user, assistant or tool messages; send at least one user message.',
    );
  }
  return conversation;
}
