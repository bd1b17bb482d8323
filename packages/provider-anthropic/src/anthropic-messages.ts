import type Anthropic from '@anthropic-ai/sdk';
import type { ModelMessage } from '@ghost/core';
import type {
  ModelAssistantMessage,
  ModelReasoning,
  ModelToolMessage,
  ModelUserMessage,
} from '@ghost/core/provider';
import { artifactBlocks, fileBlock, imageBlock } from './anthropic-content-blocks.js';
import { providerName } from './anthropic-error-mapping.js';

/** A block of a user or assistant message, as this provider sends them. */
export type AnthropicBlock = Anthropic.ContentBlockParam;

/** One message of the request, always with a block array so a cache marker can go on its last block. */
export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: AnthropicBlock[];
}

function userBlocks(message: ModelUserMessage): AnthropicBlock[] {
  if (typeof message.content === 'string') return [{ type: 'text', text: message.content }];
  const blocks: AnthropicBlock[] = [];
  for (const part of message.content) {
    if (part.type === 'text') blocks.push({ type: 'text', text: part.text });
    else if (part.type === 'image') blocks.push(imageBlock(part));
    else blocks.push(fileBlock(part));
  }
  return blocks;
}

/**
 * Anthropic's own thinking, as it sent it: signed `thinking` blocks and opaque `redacted_thinking`
 * blocks, unchanged, because the API rejects a turn whose thinking was altered or dropped while
 * thinking is on. Reasoning from another provider, or without a signature, is not sent.
 */
function reasoningBlocks(reasoning: readonly ModelReasoning[] | undefined): AnthropicBlock[] {
  const blocks: AnthropicBlock[] = [];
  for (const item of reasoning ?? []) {
    if (item.provider !== providerName) continue;
    if (item.redactedData !== undefined) blocks.push({ type: 'redacted_thinking', data: item.redactedData });
    else if (item.signature !== undefined) {
      blocks.push({ type: 'thinking', thinking: item.text, signature: item.signature });
    }
  }
  return blocks;
}

/** The arguments' JSON as the object `tool_use.input` must be. */
function toolInput(argumentsText: string): Record<string, unknown> {
  if (argumentsText.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(argumentsText);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
      return parsed as Record<string, unknown>;
    }
  } catch {
    // The model wrote arguments that are not JSON; the tool result already told it so, and the
    // API accepts only an object here.
  }
  return {};
}

function assistantBlocks(message: ModelAssistantMessage): AnthropicBlock[] {
  const blocks = reasoningBlocks(message.reasoning);
  // The API rejects empty text blocks.
  if (message.content !== '') blocks.push({ type: 'text', text: message.content });
  for (const call of message.toolCalls ?? []) {
    blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: toolInput(call.arguments) });
  }
  return blocks;
}

function toolResultBlock(message: ModelToolMessage): Anthropic.ToolResultBlockParam {
  const artifacts = artifactBlocks(message.artifacts ?? []);
  const block: Anthropic.ToolResultBlockParam = { type: 'tool_result', tool_use_id: message.toolCallId };
  if (artifacts.length > 0) {
    block.content =
      message.content === '' ? artifacts : [{ type: 'text', text: message.content }, ...artifacts];
  } else if (message.content !== '') {
    block.content = message.content;
  }
  if (message.isError === true) block.is_error = true;
  return block;
}

/**
 * The conversation as Messages API turns. Tool results become `tool_result` blocks in a user
 * turn, and consecutive user-side messages (the results of parallel calls, a user's message after
 * them) share one turn, results first, as the API requires. Assistant turns carry their thinking
 * first, then text, then `tool_use` blocks; one with nothing to send is left out.
 */
export function toAnthropicMessages(messages: readonly ModelMessage[]): AnthropicMessage[] {
  const turns: AnthropicMessage[] = [];
  for (const message of messages) {
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const blocks =
      message.role === 'assistant'
        ? assistantBlocks(message)
        : message.role === 'tool'
          ? [toolResultBlock(message)]
          : userBlocks(message);
    if (blocks.length === 0) continue;
    const previous = turns.at(-1);
    if (previous?.role === role) previous.content.push(...blocks);
    else turns.push({ role, content: blocks });
  }
  return turns;
}
