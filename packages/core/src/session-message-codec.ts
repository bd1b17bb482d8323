import { canonicalJson } from './canonical-json.js';
import { ConfigurationError } from './errors.js';
import type {
  Artifact,
  ModelAssistantMessage,
  ModelMessage,
  ModelToolCall,
  ModelToolMessage,
  ModelUserContentPart,
  ModelUserMessage,
} from './model.js';

// Bytes and URLs have no JSON form of their own. A message's `data` is a string, bytes or a URL,
// never a plain object, so these one-key objects cannot be mistaken for anything a user wrote.
type EncodedData = string | { readonly $bytes: string } | { readonly $url: string };

function encodeData(data: Uint8Array | string | URL): EncodedData {
  if (typeof data === 'string') return data;
  if (data instanceof URL) return { $url: data.href };
  return { $bytes: Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64') };
}

function decodeData(value: unknown): Uint8Array | string | URL {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null) {
    const { $bytes, $url } = value as { $bytes?: unknown; $url?: unknown };
    if (typeof $bytes === 'string') return new Uint8Array(Buffer.from($bytes, 'base64'));
    if (typeof $url === 'string') return new URL($url);
  }
  throw new Error('a data field is neither text, bytes nor a URL');
}

function encodePart(part: ModelUserContentPart): object {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'image':
      return { type: 'image', data: encodeData(part.data), mediaType: part.mediaType };
    case 'file':
      return {
        type: 'file',
        data: encodeData(part.data),
        mediaType: part.mediaType,
        filename: part.filename,
      };
    default:
      throw new Error(`a content part has type ${JSON.stringify((part as { type?: unknown }).type)}`);
  }
}

function encodeToolCall(call: ModelToolCall): object {
  return { id: call.id, name: call.name, arguments: call.arguments, providerMetadata: call.providerMetadata };
}

function encodeArtifact(artifact: Artifact): object {
  return {
    name: artifact.name,
    mediaType: artifact.mediaType,
    data: encodeData(artifact.data),
    metadata: artifact.metadata,
  };
}

/** The fields of a message a session keeps: reasoning is left out (see `docs/guides/sessions.md`). */
function storedForm(message: ModelMessage): object {
  switch (message.role) {
    case 'user':
      return {
        role: 'user',
        content: typeof message.content === 'string' ? message.content : message.content.map(encodePart),
      };
    case 'assistant':
      return {
        role: 'assistant',
        content: message.content,
        toolCalls:
          message.toolCalls === undefined || message.toolCalls.length === 0
            ? undefined
            : message.toolCalls.map(encodeToolCall),
      };
    case 'tool':
      return {
        role: 'tool',
        toolCallId: message.toolCallId,
        toolName: message.toolName,
        content: message.content,
        isError: message.isError === true ? true : undefined,
        artifacts:
          message.artifacts === undefined || message.artifacts.length === 0
            ? undefined
            : message.artifacts.map(encodeArtifact),
      };
    default:
      throw new Error(`its role is ${JSON.stringify((message as { role?: unknown }).role)}`);
  }
}

/**
 * A message as a session stores it: canonical JSON text (sorted keys, so equal messages give equal
 * text), bytes as base64 and URLs as text, reasoning left out. Throws a `ConfigurationError`
 * (`SESSION_MESSAGE_INVALID`) for a message that cannot be stored, such as one whose metadata holds
 * a function.
 */
export function encodeSessionMessage(message: ModelMessage, where = 'A message'): string {
  try {
    return canonicalJson(storedForm(message));
  } catch (error) {
    throw new ConfigurationError(`${where} cannot be stored in a session: ${(error as Error).message}.`, {
      code: 'SESSION_MESSAGE_INVALID',
      cause: error,
    });
  }
}

function record(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error(`${what} is not an object`);
  return value as Record<string, unknown>;
}

function text(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new Error(`${what} is not text`);
  return value;
}

function optional<Key extends string, Value>(key: Key, value: Value | undefined): { [K in Key]?: Value } {
  return (value === undefined ? {} : { [key]: value }) as { [K in Key]?: Value };
}

function decodePart(value: unknown): ModelUserContentPart {
  const part = record(value, 'a content part');
  switch (part.type) {
    case 'text':
      return { type: 'text', text: text(part.text, 'a text part') };
    case 'image':
      return {
        type: 'image',
        data: decodeData(part.data),
        ...optional(
          'mediaType',
          part.mediaType === undefined ? undefined : text(part.mediaType, 'a media type'),
        ),
      };
    case 'file':
      return {
        type: 'file',
        data: decodeData(part.data),
        mediaType: text(part.mediaType, 'a media type'),
        ...optional('filename', part.filename === undefined ? undefined : text(part.filename, 'a file name')),
      };
    default:
      throw new Error(`a content part has type ${JSON.stringify(part.type)}`);
  }
}

function decodeToolCall(value: unknown): ModelToolCall {
  const call = record(value, 'a tool call');
  return {
    id: text(call.id, 'a tool call id'),
    name: text(call.name, 'a tool name'),
    arguments: text(call.arguments, 'tool call arguments'),
    ...optional(
      'providerMetadata',
      call.providerMetadata === undefined
        ? undefined
        : (record(call.providerMetadata, 'provider metadata') as ModelToolCall['providerMetadata']),
    ),
  };
}

function decodeArtifact(value: unknown): Artifact {
  const artifact = record(value, 'an artifact');
  const data = decodeData(artifact.data);
  if (data instanceof URL) throw new Error('an artifact holds a URL');
  return {
    name: text(artifact.name, 'an artifact name'),
    mediaType: text(artifact.mediaType, 'an artifact media type'),
    data,
    ...optional(
      'metadata',
      artifact.metadata === undefined ? undefined : record(artifact.metadata, 'artifact metadata'),
    ),
  };
}

/**
 * The message a session stored as `text` (see {@link encodeSessionMessage}). Throws an `Error`
 * saying what is wrong when the text is not a stored message; the caller names the store and row.
 */
export function decodeSessionMessage(stored: string): ModelMessage {
  const message = record(JSON.parse(stored) as unknown, 'the message');
  switch (message.role) {
    case 'user': {
      const content = message.content;
      const decoded: ModelUserMessage = {
        role: 'user',
        content: typeof content === 'string' ? content : arrayOf(content, 'user content').map(decodePart),
      };
      return decoded;
    }
    case 'assistant': {
      const decoded: ModelAssistantMessage = {
        role: 'assistant',
        content: text(message.content, 'assistant content'),
        ...optional(
          'toolCalls',
          message.toolCalls === undefined
            ? undefined
            : arrayOf(message.toolCalls, 'tool calls').map(decodeToolCall),
        ),
      };
      return decoded;
    }
    case 'tool': {
      const decoded: ModelToolMessage = {
        role: 'tool',
        toolCallId: text(message.toolCallId, 'a tool call id'),
        toolName: text(message.toolName, 'a tool name'),
        content: text(message.content, 'tool content'),
        ...optional('isError', message.isError === true ? true : undefined),
        ...optional(
          'artifacts',
          message.artifacts === undefined
            ? undefined
            : arrayOf(message.artifacts, 'artifacts').map(decodeArtifact),
        ),
      };
      return decoded;
    }
    default:
      throw new Error(`the message has role ${JSON.stringify(message.role)}`);
  }
}

function arrayOf(value: unknown, what: string): readonly unknown[] {
  if (!Array.isArray(value)) throw new Error(`${what} is not a list`);
  return value;
}
