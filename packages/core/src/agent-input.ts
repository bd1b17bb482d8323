import { ConfigurationError } from './errors.js';
import type { ModelMessage, ModelToolCall, ModelUserContentPart } from './model.js';

/**
 * What an agent is asked: a message, or a conversation to continue (`run.messages` of an earlier
 * run, plus the next user message).
 */
export type AgentInput = string | readonly ModelMessage[];

const contentPartTypes = new Set(['text', 'image', 'file']);

function invalid(agentName: string, message: string): ConfigurationError {
  return new ConfigurationError(`Agent '${agentName}' input: ${message}`, { code: 'AGENT_INPUT_INVALID' });
}

function checkUserContent(agentName: string, content: unknown, at: number): void {
  if (typeof content === 'string') return;
  if (!Array.isArray(content) || content.length === 0) {
    throw invalid(agentName, `messages[${at}] (user) needs content: a string or a non-empty array of parts.`);
  }
  for (const [index, part] of (content as ModelUserContentPart[]).entries()) {
    if (typeof part !== 'object' || part === null || !contentPartTypes.has(part.type)) {
      throw invalid(
        agentName,
        `messages[${at}].content[${index}] must be a part of type 'text', 'image' or 'file'.`,
      );
    }
    if (part.type === 'text' && typeof part.text !== 'string') {
      throw invalid(agentName, `messages[${at}].content[${index}] is a text part without a string text.`);
    }
    if (part.type !== 'text') {
      const data: unknown = part.data;
      if (typeof data !== 'string' && !(data instanceof Uint8Array) && !(data instanceof URL)) {
        throw invalid(
          agentName,
          `messages[${at}].content[${index}] (${part.type}) needs data: bytes, base64 text or a URL.`,
        );
      }
      if (part.type === 'file' && typeof part.mediaType !== 'string') {
        throw invalid(agentName, `messages[${at}].content[${index}] (file) needs a mediaType.`);
      }
    }
  }
}

function checkToolCalls(agentName: string, toolCalls: unknown, at: number): readonly ModelToolCall[] {
  if (toolCalls === undefined) return [];
  if (!Array.isArray(toolCalls)) throw invalid(agentName, `messages[${at}].toolCalls must be an array.`);
  for (const [index, call] of (toolCalls as ModelToolCall[]).entries()) {
    if (typeof call?.id !== 'string' || typeof call.name !== 'string' || typeof call.arguments !== 'string') {
      throw invalid(
        agentName,
        `messages[${at}].toolCalls[${index}] needs a string id, name and arguments (the JSON text).`,
      );
    }
  }
  return toolCalls as readonly ModelToolCall[];
}

/**
 * The conversation an input starts a run with, checked: roles and content are well formed, and
 * every tool call of an assistant message is answered by a tool message before the next
 * assistant or user message (providers reject a conversation that is not). Throws a
 * `ConfigurationError` with code `AGENT_INPUT_INVALID` that says which message is wrong.
 */
export function conversationOf(agentName: string, input: AgentInput): ModelMessage[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  if (!Array.isArray(input) || input.length === 0) {
    throw invalid(agentName, 'pass a string, or a non-empty array of messages such as run.messages.');
  }
  let unanswered = new Map<string, string>();
  const requireAnswered = (at: number) => {
    if (unanswered.size === 0) return;
    const [id, name] = [...unanswered.entries()][0] as [string, string];
    throw invalid(
      agentName,
      `messages[${at}] comes before the result of tool call '${id}' (${name}); add a tool message answering it first.`,
    );
  };
  for (const [at, message] of input.entries()) {
    const role = (message as { role?: unknown } | null)?.role;
    if (role === 'user') {
      requireAnswered(at);
      checkUserContent(agentName, message.content, at);
    } else if (role === 'assistant') {
      requireAnswered(at);
      if (typeof message.content !== 'string') {
        throw invalid(agentName, `messages[${at}] (assistant) needs string content.`);
      }
      const calls = checkToolCalls(agentName, (message as { toolCalls?: unknown }).toolCalls, at);
      unanswered = new Map(calls.map((call) => [call.id, call.name]));
    } else if (role === 'tool') {
      const { toolCallId, content } = message as { toolCallId?: unknown; content?: unknown };
      if (typeof toolCallId !== 'string' || typeof content !== 'string') {
        throw invalid(agentName, `messages[${at}] (tool) needs a string toolCallId and content.`);
      }
      if (!unanswered.delete(toolCallId)) {
        throw invalid(
          agentName,
          `messages[${at}] answers tool call '${toolCallId}', which the assistant message before it did not make (or which was already answered).`,
        );
      }
    } else {
      throw invalid(
        agentName,
        `messages[${at}] has role ${JSON.stringify(role)}; use 'user', 'assistant' or 'tool'.`,
      );
    }
  }
  requireAnswered(input.length);
  return [...input];
}

/** The text of the last user message, for events and logs that show what was asked. */
export function latestUserText(messages: readonly ModelMessage[]): string {
  for (let at = messages.length - 1; at >= 0; at -= 1) {
    const message = messages[at];
    if (message?.role !== 'user') continue;
    if (typeof message.content === 'string') return message.content;
    return message.content
      .filter((part) => part.type === 'text')
      .map((part) => (part as { text: string }).text)
      .join('\n');
  }
  return '';
}
