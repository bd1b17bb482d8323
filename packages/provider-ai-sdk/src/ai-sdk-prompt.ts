import type { Artifact, JsonValue, ModelMessage } from '@ghost/core';
import type {
  ModelAssistantMessage,
  ModelFilePart,
  ModelImagePart,
  ModelToolMessage,
  ModelUserMessage,
  ProviderOptions,
} from '@ghost/core/provider';
import type { AISDKSpecificationVersion } from './ai-sdk-language-model.js';

/**
 * A file's data as the prompt carries it: bytes, base64 text or a URL in `v2` and `v3`; in `v4`
 * the same, tagged (`{ type: 'data', data }` or `{ type: 'url', url }`).
 */
type AISDKFileData =
  | Uint8Array
  | string
  | URL
  | { readonly type: 'data'; readonly data: Uint8Array | string }
  | { readonly type: 'url'; readonly url: URL };

interface TextPart {
  type: 'text';
  text: string;
}

interface FilePart {
  type: 'file';
  data: AISDKFileData;
  mediaType: string;
  filename?: string;
}

interface ReasoningPart {
  type: 'reasoning';
  text: string;
  providerOptions?: ProviderOptions;
}

interface ToolCallPart {
  type: 'tool-call';
  toolCallId: string;
  toolName: string;
  input: unknown;
  providerOptions?: ProviderOptions;
}

/** One piece of a tool result that has artifacts; the shape of media pieces depends on the version. */
type ToolResultContentPart =
  | { type: 'text'; text: string }
  | { type: 'media'; data: string; mediaType: string }
  | { type: 'image-data'; data: string; mediaType: string }
  | { type: 'file-data'; data: string; mediaType: string; filename?: string }
  | { type: 'file'; data: AISDKFileData; mediaType: string; filename?: string };

/** A tool's result as the AI SDK types it. */
export type AISDKToolResultOutput =
  | { type: 'text'; value: string }
  | { type: 'json'; value: JsonValue }
  | { type: 'error-text'; value: string }
  | { type: 'content'; value: ToolResultContentPart[] };

interface ToolResultPart {
  type: 'tool-result';
  toolCallId: string;
  toolName: string;
  output: AISDKToolResultOutput;
}

/** One message of the AI SDK's prompt, as `fromAISDK` builds it. */
export type AISDKPromptMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: (TextPart | FilePart)[] }
  | { role: 'assistant'; content: (TextPart | ReasoningPart | ToolCallPart)[] }
  | { role: 'tool'; content: ToolResultPart[] };

/** Who the prompt is for: the specification decides a few shapes, the provider which reasoning goes back. */
export interface AISDKPromptTarget {
  readonly specificationVersion: AISDKSpecificationVersion;
  /** The model's `provider`; reasoning another provider produced is not sent to it. */
  readonly provider: string;
}

/**
 * Turns Ghost's instructions and messages into the AI SDK's prompt: the instructions as the system
 * message, user text, images and files as parts, assistant messages with their reasoning (its
 * provider metadata as the part's `providerOptions`, so signatures and encrypted reasoning go
 * back unchanged) and tool calls, and each run of tool results as one `tool` message.
 */
export function aiSDKPrompt(
  instructions: string,
  messages: readonly ModelMessage[],
  target: AISDKPromptTarget,
): AISDKPromptMessage[] {
  const prompt: AISDKPromptMessage[] = [];
  if (instructions !== '') prompt.push({ role: 'system', content: instructions });
  for (const message of messages) {
    switch (message.role) {
      case 'user':
        prompt.push({ role: 'user', content: userContent(message, target) });
        break;
      case 'assistant':
        prompt.push({ role: 'assistant', content: assistantContent(message, target) });
        break;
      case 'tool': {
        const part = toolResultPart(message, target);
        const previous = prompt.at(-1);
        // Results of one turn's parallel calls travel together, as the AI SDK itself groups them.
        if (previous?.role === 'tool') previous.content.push(part);
        else prompt.push({ role: 'tool', content: [part] });
        break;
      }
    }
  }
  return prompt;
}

function userContent(message: ModelUserMessage, target: AISDKPromptTarget): (TextPart | FilePart)[] {
  if (typeof message.content === 'string') return [{ type: 'text', text: message.content }];
  return message.content.map((part): TextPart | FilePart =>
    part.type === 'text' ? { type: 'text', text: part.text } : filePart(part, target),
  );
}

function filePart(part: ModelImagePart | ModelFilePart, target: AISDKPromptTarget): FilePart {
  const inline = dataUrlContent(part.data);
  const mediaType = part.mediaType ?? inline?.mediaType ?? 'image/*';
  const data = inline?.base64 ?? part.data;
  const filename = part.type === 'file' ? part.filename : undefined;
  return {
    type: 'file',
    data: fileData(data, target),
    mediaType,
    ...(filename !== undefined ? { filename } : {}),
  };
}

/**
 * A `data:` URL split into its media type and base64 payload. Providers take inline bytes as data,
 * and several cannot fetch a `data:` URL (the AI SDK's own `ai` package splits them the same way).
 */
function dataUrlContent(data: Uint8Array | string | URL): { mediaType: string; base64: string } | undefined {
  const text = data instanceof URL ? data.href : typeof data === 'string' ? data : undefined;
  if (text === undefined || !text.startsWith('data:')) return undefined;
  const match = /^data:([^;,]*)((?:;[^;,]*)*?);base64,(.*)$/s.exec(text);
  if (match) return { mediaType: match[1] || 'application/octet-stream', base64: match[3] ?? '' };
  const comma = text.indexOf(',');
  if (comma < 0) return undefined;
  // A data: URL without ;base64 carries percent-encoded text.
  const header = text.slice('data:'.length, comma);
  const bytes = new TextEncoder().encode(decodeURIComponent(text.slice(comma + 1)));
  return { mediaType: header.split(';')[0] || 'text/plain', base64: Buffer.from(bytes).toString('base64') };
}

function fileData(data: Uint8Array | string | URL, target: AISDKPromptTarget): AISDKFileData {
  if (target.specificationVersion !== 'v4') return data;
  return data instanceof URL ? { type: 'url', url: data } : { type: 'data', data };
}

function assistantContent(
  message: ModelAssistantMessage,
  target: AISDKPromptTarget,
): (TextPart | ReasoningPart | ToolCallPart)[] {
  const content: (TextPart | ReasoningPart | ToolCallPart)[] = [];
  for (const reasoning of message.reasoning ?? []) {
    // Another provider's reasoning means nothing to this one, and signed blocks would be refused.
    if (reasoning.provider !== target.provider) continue;
    content.push({
      type: 'reasoning',
      text: reasoning.text,
      ...(reasoning.providerMetadata !== undefined ? { providerOptions: reasoning.providerMetadata } : {}),
    });
  }
  if (message.content !== '') content.push({ type: 'text', text: message.content });
  for (const call of message.toolCalls ?? []) {
    content.push({
      type: 'tool-call',
      toolCallId: call.id,
      toolName: call.name,
      input: toolInput(call.arguments),
      ...(call.providerMetadata !== undefined ? { providerOptions: call.providerMetadata } : {}),
    });
  }
  return content;
}

/**
 * The AI SDK wants a tool call's input as a value. Arguments that are not JSON (the model wrote
 * them broken, and its tool result says so) go back as the text they were, as `ai` does.
 */
function toolInput(argumentsText: string): unknown {
  if (argumentsText.trim() === '') return {};
  try {
    return JSON.parse(argumentsText);
  } catch {
    return argumentsText;
  }
}

function toolResultPart(message: ModelToolMessage, target: AISDKPromptTarget): ToolResultPart {
  return {
    type: 'tool-result',
    toolCallId: message.toolCallId,
    toolName: message.toolName,
    output: toolResultOutput(message, target),
  };
}

/**
 * Errors go as `error-text`; results with artifacts as `content` (the text, then each artifact);
 * results whose text is a JSON object or array as `json`; anything else as `text`.
 */
export function toolResultOutput(
  message: ModelToolMessage,
  target: AISDKPromptTarget,
): AISDKToolResultOutput {
  if (message.isError) return { type: 'error-text', value: message.content };
  const artifacts = message.artifacts ?? [];
  if (artifacts.length > 0) {
    const value: ToolResultContentPart[] = [];
    if (message.content !== '') value.push({ type: 'text', text: message.content });
    for (const artifact of artifacts) value.push(artifactPart(artifact, target));
    return { type: 'content', value };
  }
  const json = structuredJson(message.content);
  return json === undefined ? { type: 'text', value: message.content } : { type: 'json', value: json };
}

function structuredJson(text: string): JsonValue | undefined {
  const first = text.trimStart()[0];
  if (first !== '{' && first !== '[') return undefined;
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
}

function artifactPart(artifact: Artifact, target: AISDKPromptTarget): ToolResultContentPart {
  // String data is text for textual media (see Artifact); only bytes are media.
  if (typeof artifact.data === 'string') return { type: 'text', text: artifact.data };
  const base64 = Buffer.from(artifact.data).toString('base64');
  const { mediaType, name } = artifact;
  switch (target.specificationVersion) {
    case 'v2':
      return { type: 'media', data: base64, mediaType };
    case 'v3':
      return mediaType.startsWith('image/')
        ? { type: 'image-data', data: base64, mediaType }
        : { type: 'file-data', data: base64, mediaType, filename: name };
    case 'v4':
      return { type: 'file', data: { type: 'data', data: base64 }, mediaType, filename: name };
  }
}
