import type { ModelMessage } from '@ghost/core';
import type { ModelToolDefinition, ModelUserContentPart } from '@ghost/core/provider';

/** One part of a message in the conventions' JSON form (`text`, `tool_call`, `blob`, ...). */
export type GenAIPart = { readonly type: string } & Readonly<Record<string, unknown>>;

/** A message in the conventions' JSON form (`gen_ai.input.messages`). */
export interface GenAIMessage {
  readonly role: string;
  readonly parts: readonly GenAIPart[];
}

/** An answer in the conventions' JSON form (`gen_ai.output.messages`). */
export interface GenAIOutputMessage extends GenAIMessage {
  readonly finish_reason: string;
}

/** A tool call the model made in one turn, as the turn's events carried it. */
export interface TurnToolCall {
  readonly id: string;
  readonly name: string;
  /** The arguments' JSON text. */
  readonly arguments: string;
}

/**
 * Ghost's normalised finish reasons in the conventions' vocabulary (`tool-calls` is `tool_call`);
 * `other` keeps the provider's own reason when it gave one.
 */
export function genAIFinishReason(finishReason: string, rawFinishReason: string | undefined): string {
  switch (finishReason) {
    case 'tool-calls':
      return 'tool_call';
    case 'content-filter':
      return 'content_filter';
    case 'other':
      return rawFinishReason ?? 'other';
    default:
      return finishReason;
  }
}

/** The conversation sent to a model, as `gen_ai.input.messages`. */
export function genAIInputMessages(messages: readonly ModelMessage[]): GenAIMessage[] {
  return messages.map(inputMessage);
}

function inputMessage(message: ModelMessage): GenAIMessage {
  if (message.role === 'user') {
    const { content } = message;
    return {
      role: 'user',
      parts: typeof content === 'string' ? [{ type: 'text', content }] : content.map(userPart),
    };
  }
  if (message.role === 'assistant') {
    const parts: GenAIPart[] = [];
    for (const reasoning of message.reasoning ?? []) {
      if (reasoning.text !== '') parts.push({ type: 'reasoning', content: reasoning.text });
    }
    if (message.content !== '') parts.push({ type: 'text', content: message.content });
    for (const call of message.toolCalls ?? []) parts.push(toolCallPart(call));
    return { role: 'assistant', parts };
  }
  return {
    role: 'tool',
    parts: [{ type: 'tool_call_response', id: message.toolCallId, response: parsedJson(message.content) }],
  };
}

/** The model's answer in one turn, as the one message of `gen_ai.output.messages`. */
export function genAIOutputMessage(answer: {
  readonly reasoning: string;
  readonly text: string;
  readonly toolCalls: readonly TurnToolCall[];
  readonly finishReason: string;
}): GenAIOutputMessage {
  const parts: GenAIPart[] = [];
  if (answer.reasoning !== '') parts.push({ type: 'reasoning', content: answer.reasoning });
  if (answer.text !== '') parts.push({ type: 'text', content: answer.text });
  for (const call of answer.toolCalls) parts.push(toolCallPart(call));
  return { role: 'assistant', parts, finish_reason: answer.finishReason };
}

/** The agent's instructions, as `gen_ai.system_instructions`. */
export function genAISystemInstructions(instructions: string): GenAIPart[] {
  return instructions === '' ? [] : [{ type: 'text', content: instructions }];
}

/** The tools the model was offered, as `gen_ai.tool.definitions`. */
export function genAIToolDefinitions(tools: readonly ModelToolDefinition[]): GenAIPart[] {
  return tools.map((tool) => ({
    type: 'function',
    name: tool.name,
    description: tool.description,
    parameters: tool.inputSchema,
  }));
}

/**
 * JSON text for an attribute: the JavaScript API takes only primitives and arrays of them, and
 * the conventions say to record structured content as a JSON string where that is so.
 */
export function jsonAttribute(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * The conventions expect tool arguments and results as objects, deserialised where the
 * instrumentation has text; text that is not JSON stays text.
 */
function parsedJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function toolCallPart(call: TurnToolCall): GenAIPart {
  return { type: 'tool_call', id: call.id, name: call.name, arguments: parsedJson(call.arguments) };
}

function userPart(part: ModelUserContentPart): GenAIPart {
  if (part.type === 'text') return { type: 'text', content: part.text };
  const mediaType = part.mediaType;
  const modality = part.type === 'image' ? 'image' : modalityOf(mediaType);
  const filename = part.type === 'file' && part.filename !== undefined ? { filename: part.filename } : {};
  const { data } = part;
  if (data instanceof URL) {
    const inline = data.protocol === 'data:' ? dataUrlContent(data.href) : undefined;
    if (inline === undefined) {
      return { type: 'uri', modality, mime_type: mediaType ?? null, uri: data.href, ...filename };
    }
    return {
      type: 'blob',
      modality,
      mime_type: mediaType ?? inline.mediaType,
      content: inline.base64,
      ...filename,
    };
  }
  const base64 = typeof data === 'string' ? data : Buffer.from(data).toString('base64');
  return { type: 'blob', modality, mime_type: mediaType ?? null, content: base64, ...filename };
}

function modalityOf(mediaType: string | undefined): string {
  if (mediaType?.startsWith('image/')) return 'image';
  if (mediaType?.startsWith('audio/')) return 'audio';
  if (mediaType?.startsWith('video/')) return 'video';
  return 'document';
}

/** The media type and base64 bytes of a `data:` URL; the conventions keep inline bytes in `blob` parts. */
function dataUrlContent(href: string): { mediaType: string | null; base64: string } | undefined {
  const comma = href.indexOf(',');
  if (comma < 0) return undefined;
  const header = href.slice('data:'.length, comma);
  const payload = href.slice(comma + 1);
  const isBase64 = header.endsWith(';base64');
  const mediaType = (isBase64 ? header.slice(0, -';base64'.length) : header).split(';')[0] || null;
  try {
    const base64 = isBase64 ? payload : Buffer.from(decodeURIComponent(payload)).toString('base64');
    return { mediaType, base64 };
  } catch {
    return undefined; // a malformed percent-encoding: recorded as the URI it is
  }
}
