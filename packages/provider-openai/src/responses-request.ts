import type { Artifact } from '@ghost/core';
import type {
  ModelAssistantMessage,
  ModelRequest,
  ModelToolMessage,
  ModelUserMessage,
} from '@ghost/core/provider';
import type OpenAI from 'openai';
import { dataUrl, defaultFilename, isTextualMediaType, partUrl } from './data-url.js';
import { mergeProviderOptions } from './merge-provider-options.js';
import { isOpenAIReasoningModel } from './reasoning-model.js';
import { isStrictJsonSchema } from './strict-json-schema.js';
import { structuredOutputName } from './structured-output-name.js';

type ResponsesBody = OpenAI.Responses.ResponseCreateParamsStreaming;
type InputItem = OpenAI.Responses.ResponseInputItem;
type InputContent = OpenAI.Responses.ResponseInputContent;
type OutputContent = OpenAI.Responses.ResponseFunctionCallOutputItem;

/** Who the request is for: the model id, and the provider name whose reasoning may go back. */
export interface ResponsesRequestTarget {
  readonly modelId: string;
  /** Reasoning blocks tagged with this provider are sent back; others are dropped. */
  readonly provider: string;
  /** The `providerOptions` key read into the body. */
  readonly optionsKey: string;
}

function userItem(message: ModelUserMessage): InputItem {
  if (typeof message.content === 'string') return { role: 'user', content: message.content };
  const content: InputContent[] = [];
  for (const part of message.content) {
    if (part.type === 'text') content.push({ type: 'input_text', text: part.text });
    else if (part.type === 'image') {
      content.push({
        type: 'input_image',
        image_url: partUrl(part.data, part.mediaType, 'image'),
        detail: 'auto',
      });
    } else if (part.data instanceof URL && part.data.protocol !== 'data:') {
      content.push({
        type: 'input_file',
        file_url: part.data.href,
        ...(part.filename !== undefined ? { filename: part.filename } : {}),
      });
    } else {
      content.push({
        type: 'input_file',
        file_data: partUrl(part.data, part.mediaType, 'file'),
        filename: part.filename ?? defaultFilename(part.mediaType),
      });
    }
  }
  return { role: 'user', content };
}

function assistantItems(message: ModelAssistantMessage, provider: string): InputItem[] {
  const items: InputItem[] = [];
  for (const reasoning of message.reasoning ?? []) {
    // Only OpenAI's own reasoning items, by id, can go back; another provider's thinking cannot.
    if (reasoning.provider !== provider || reasoning.id === undefined) continue;
    items.push({
      type: 'reasoning',
      id: reasoning.id,
      summary: reasoning.text === '' ? [] : [{ type: 'summary_text', text: reasoning.text }],
      ...(reasoning.redactedData !== undefined ? { encrypted_content: reasoning.redactedData } : {}),
    });
  }
  if (message.content !== '') items.push({ role: 'assistant', content: message.content });
  for (const call of message.toolCalls ?? []) {
    items.push({ type: 'function_call', call_id: call.id, name: call.name, arguments: call.arguments });
  }
  return items;
}

function artifactContent(artifact: Artifact): OutputContent {
  const { data, mediaType, name } = artifact;
  if (typeof data === 'string' && isTextualMediaType(mediaType)) {
    return { type: 'input_text', text: `${name}:\n${data}` };
  }
  if (mediaType.startsWith('image/')) return { type: 'input_image', image_url: dataUrl(data, mediaType) };
  return { type: 'input_file', file_data: dataUrl(data, mediaType), filename: name };
}

function toolOutputItem(message: ModelToolMessage): InputItem {
  const artifacts = message.artifacts ?? [];
  if (artifacts.length === 0) {
    return { type: 'function_call_output', call_id: message.toolCallId, output: message.content };
  }
  // Tool results may carry images and files: Responses takes them in the output itself.
  const output: OutputContent[] = [{ type: 'input_text', text: message.content }];
  for (const artifact of artifacts) output.push(artifactContent(artifact));
  return { type: 'function_call_output', call_id: message.toolCallId, output };
}

/** The conversation as Responses input items. */
function responsesInput(request: ModelRequest, provider: string): InputItem[] {
  const items: InputItem[] = [];
  for (const message of request.messages) {
    if (message.role === 'user') items.push(userItem(message));
    else if (message.role === 'assistant') items.push(...assistantItems(message, provider));
    else items.push(toolOutputItem(message));
  }
  return items;
}

/**
 * The Responses API request body for one turn. Ghost sends the whole conversation each turn,
 * so nothing needs to be stored at OpenAI: `store` is `false`, and reasoning models are asked
 * for `reasoning.encrypted_content`, which goes back with its reasoning item's id on the next
 * turn. Both can be changed through `providerOptions.openai`, which is merged in last (nested
 * objects key by key). Reasoning models reject sampling settings, so `temperature` and `topP`
 * are left out for them; the Responses API has no `stop` or `seed`, so those are ignored.
 */
export function responsesRequestBody(request: ModelRequest, target: ResponsesRequestTarget): ResponsesBody {
  const { settings, output } = request;
  const isReasoning = isOpenAIReasoningModel(target.modelId);
  const body: ResponsesBody = {
    model: target.modelId,
    input: responsesInput(request, target.provider),
    store: false,
    stream: true,
    ...(request.instructions !== '' ? { instructions: request.instructions } : {}),
    ...(isReasoning ? { include: ['reasoning.encrypted_content'] } : {}),
  };
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      name: tool.name,
      description: tool.description,
      parameters: tool.inputSchema,
      // Strict function calling refuses optional properties, which most tool schemas have;
      // Ghost validates every call's input against the tool's schema instead.
      strict: false,
    }));
  }
  if (output !== undefined) {
    body.text = {
      format: {
        type: 'json_schema',
        name: structuredOutputName(output.name),
        schema: output.schema,
        strict: isStrictJsonSchema(output.schema),
        ...(output.description !== undefined ? { description: output.description } : {}),
      },
    };
  }
  if (settings?.maxOutputTokens !== undefined) body.max_output_tokens = settings.maxOutputTokens;
  if (!isReasoning && settings?.temperature !== undefined) body.temperature = settings.temperature;
  if (!isReasoning && settings?.topP !== undefined) body.top_p = settings.topP;
  const merged = mergeProviderOptions(body, request.providerOptions, target.optionsKey);
  return { ...merged, stream: true };
}
