import type { JsonSchema, ModelRequest, ProviderOptions } from '@ghost/core/provider';
import { type AISDKPromptMessage, type AISDKPromptTarget, aiSDKPrompt } from './ai-sdk-prompt.js';

/** A Ghost tool as the AI SDK's function tool. */
interface AISDKFunctionTool {
  type: 'function';
  name: string;
  description?: string;
  inputSchema: JsonSchema;
}

/** The options of one `doStream` call, as `fromAISDK` builds them from a Ghost request. */
export interface AISDKStreamCallOptions {
  prompt: AISDKPromptMessage[];
  tools?: AISDKFunctionTool[];
  responseFormat?: { type: 'json'; schema: JsonSchema; name: string; description?: string };
  temperature?: number;
  topP?: number;
  maxOutputTokens?: number;
  stopSequences?: string[];
  seed?: number;
  providerOptions?: ProviderOptions;
  abortSignal: AbortSignal;
}

/**
 * Maps a Ghost request to the AI SDK's call options: the prompt, the tools as function tools with
 * their JSON Schema, `output` as a JSON `responseFormat`, the sampling settings, and the
 * request's `providerOptions` unchanged (both are keyed by provider name: `{ openai: { ... } }`).
 */
export function aiSDKCallOptions(
  request: ModelRequest,
  target: AISDKPromptTarget,
  abortSignal: AbortSignal,
): AISDKStreamCallOptions {
  const options: AISDKStreamCallOptions = {
    prompt: aiSDKPrompt(request.instructions, request.messages, target),
    abortSignal,
  };
  if (request.tools.length > 0) {
    options.tools = request.tools.map((tool) => ({
      type: 'function',
      name: tool.name,
      ...(tool.description !== '' ? { description: tool.description } : {}),
      inputSchema: tool.inputSchema,
    }));
  }
  if (request.output !== undefined) {
    const { schema, name, description } = request.output;
    options.responseFormat = {
      type: 'json',
      schema,
      name: name ?? 'output',
      ...(description !== undefined ? { description } : {}),
    };
  }
  const settings = request.settings ?? {};
  if (settings.temperature !== undefined) options.temperature = settings.temperature;
  if (settings.topP !== undefined) options.topP = settings.topP;
  if (settings.maxOutputTokens !== undefined) options.maxOutputTokens = settings.maxOutputTokens;
  if (settings.stopSequences !== undefined) options.stopSequences = [...settings.stopSequences];
  if (settings.seed !== undefined) options.seed = settings.seed;
  if (request.providerOptions !== undefined) options.providerOptions = request.providerOptions;
  return options;
}
