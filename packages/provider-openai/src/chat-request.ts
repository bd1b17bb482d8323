import { type Artifact, ConfigurationError } from '@ghost/core';
import type {
  ModelAssistantMessage,
  ModelRequest,
  ModelUserContentPart,
  ModelUserMessage,
} from '@ghost/core/provider';
import type OpenAI from 'openai';
import { dataUrl, defaultFilename, isTextualMediaType, partUrl } from './data-url.js';
import { mergeProviderOptions } from './merge-provider-options.js';
import { isOpenAIReasoningModel } from './reasoning-model.js';
import { isStrictJsonSchema } from './strict-json-schema.js';
import { structuredOutputName } from './structured-output-name.js';

type ChatBody = OpenAI.Chat.ChatCompletionCreateParamsStreaming;
type ChatMessage = OpenAI.Chat.ChatCompletionMessageParam;
type ChatContentPart = OpenAI.Chat.ChatCompletionContentPart;

/** Who the request is for. */
export interface ChatRequestTarget {
  /** The model name sent in the body. */
  readonly modelId: string;
  /** The `providerOptions` key read into the body. */
  readonly optionsKey: string;
  /**
   * OpenAI itself: `max_completion_tokens`, and no sampling settings for reasoning models.
   * Other servers get `max_tokens`, which they all understand, and every setting.
   */
  readonly isOpenAI: boolean;
}

function filePart(part: Extract<ModelUserContentPart, { type: 'file' }>): ChatContentPart {
  if (part.data instanceof URL && part.data.protocol !== 'data:') {
    throw new ConfigurationError(
      `Chat Completions takes files as bytes or base64, not a URL (${part.data.href}): fetch the file and pass its bytes, or use the Responses API model, which accepts file URLs.`,
      { code: 'MODEL_INPUT_INVALID' },
    );
  }
  return {
    type: 'file',
    file: {
      file_data: partUrl(part.data, part.mediaType, 'file'),
      filename: part.filename ?? defaultFilename(part.mediaType),
    },
  };
}

function userMessage(message: ModelUserMessage): ChatMessage {
  if (typeof message.content === 'string') return { role: 'user', content: message.content };
  const content: ChatContentPart[] = message.content.map((part) => {
    if (part.type === 'text') return { type: 'text', text: part.text };
    if (part.type === 'image') {
      return { type: 'image_url', image_url: { url: partUrl(part.data, part.mediaType, 'image') } };
    }
    return filePart(part);
  });
  return { role: 'user', content };
}

function assistantMessage(message: ModelAssistantMessage): ChatMessage {
  const toolCalls = message.toolCalls ?? [];
  if (toolCalls.length === 0) return { role: 'assistant', content: message.content };
  return {
    role: 'assistant',
    // OpenAI wants null rather than '' beside tool calls.
    content: message.content === '' ? null : message.content,
    tool_calls: toolCalls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    })),
  };
}

function artifactPart(artifact: Artifact): ChatContentPart {
  const { data, mediaType, name } = artifact;
  if (typeof data === 'string' && isTextualMediaType(mediaType)) {
    return { type: 'text', text: `${name}:\n${data}` };
  }
  if (mediaType.startsWith('image/'))
    return { type: 'image_url', image_url: { url: dataUrl(data, mediaType) } };
  return { type: 'file', file: { file_data: dataUrl(data, mediaType), filename: name } };
}

/**
 * The conversation as Chat Completions messages, instructions first as a `system` message
 * (which every OpenAI model and every compatible server accepts). Tool messages carry text
 * only, so artifacts a tool returned (images, files) follow the tool results in a user message.
 */
function chatMessages(request: ModelRequest): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (request.instructions !== '') messages.push({ role: 'system', content: request.instructions });
  let artifacts: ChatContentPart[] = [];
  const flushArtifacts = () => {
    if (artifacts.length === 0) return;
    messages.push({
      role: 'user',
      content: [{ type: 'text', text: 'Files the tools returned:' }, ...artifacts],
    });
    artifacts = [];
  };
  for (const message of request.messages) {
    if (message.role !== 'tool') flushArtifacts();
    if (message.role === 'user') messages.push(userMessage(message));
    else if (message.role === 'assistant') messages.push(assistantMessage(message));
    else {
      messages.push({ role: 'tool', tool_call_id: message.toolCallId, content: message.content });
      for (const artifact of message.artifacts ?? []) artifacts.push(artifactPart(artifact));
    }
  }
  flushArtifacts();
  return messages;
}

/**
 * The Chat Completions request body for one turn: streamed with
 * `stream_options: { include_usage: true }` (without it no usage is reported), structured
 * output as `response_format` `json_schema` (strict only when the schema allows it), and
 * `providerOptions[optionsKey]` merged in last (nested objects key by key).
 */
export function chatRequestBody(request: ModelRequest, target: ChatRequestTarget): ChatBody {
  const { settings, output } = request;
  const dropsSampling = target.isOpenAI && isOpenAIReasoningModel(target.modelId);
  const body: ChatBody = {
    model: target.modelId,
    messages: chatMessages(request),
    stream: true,
    stream_options: { include_usage: true },
  };
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
    }));
  }
  if (output !== undefined) {
    body.response_format = {
      type: 'json_schema',
      json_schema: {
        name: structuredOutputName(output.name),
        schema: output.schema,
        strict: isStrictJsonSchema(output.schema),
        ...(output.description !== undefined ? { description: output.description } : {}),
      },
    };
  }
  if (settings?.maxOutputTokens !== undefined) {
    if (target.isOpenAI) body.max_completion_tokens = settings.maxOutputTokens;
    else body.max_tokens = settings.maxOutputTokens;
  }
  if (!dropsSampling && settings?.temperature !== undefined) body.temperature = settings.temperature;
  if (!dropsSampling && settings?.topP !== undefined) body.top_p = settings.topP;
  if (settings?.stopSequences !== undefined && settings.stopSequences.length > 0) {
    body.stop = [...settings.stopSequences];
  }
  if (settings?.seed !== undefined) body.seed = settings.seed;
  const merged = mergeProviderOptions(body, request.providerOptions, target.optionsKey);
  return { ...merged, stream: true };
}
