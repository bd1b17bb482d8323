import type Anthropic from '@anthropic-ai/sdk';
import { transformJSONSchema } from '@anthropic-ai/sdk/lib/transform-json-schema';
import type { JsonObject, JsonValue } from '@ghost/core';
import type { ModelOutputFormat, ModelRequest } from '@ghost/core/provider';
import { type AnthropicBlock, toAnthropicMessages } from './anthropic-messages.js';
import { parseProviderOptions } from './anthropic-provider-options.js';
import { defaultMaxOutputTokens } from './default-max-output-tokens.js';

/** The streaming Messages API request this provider sends. */
export type AnthropicRequestBody = Anthropic.MessageCreateParamsStreaming;

const ephemeral = { type: 'ephemeral' } as const;

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The output format as `output_config.format`. The schema goes through the SDK's own transform
 * for structured outputs (every object closed with `additionalProperties: false`, keywords the
 * API does not enforce moved into descriptions); the agent still validates the answer against the
 * original schema. A schema the transform cannot read (one without a `type`) is sent as given.
 */
function outputFormat(output: ModelOutputFormat): Anthropic.JSONOutputFormat {
  let schema: Record<string, unknown>;
  try {
    schema = transformJSONSchema(output.schema);
  } catch {
    schema = output.schema;
  }
  return { type: 'json_schema', schema };
}

/** How many tokens a manual thinking budget takes out of `max_tokens`. */
function thinkingBudget(thinking: JsonValue | undefined): number {
  if (!isObject(thinking) || thinking.type !== 'enabled') return 0;
  return typeof thinking.budget_tokens === 'number' ? thinking.budget_tokens : 0;
}

function markLastBlock(blocks: AnthropicBlock[]): void {
  const last = blocks.at(-1);
  // Thinking blocks cannot carry a cache marker; they only end assistant turns, which are not marked.
  if (last !== undefined && last.type !== 'thinking' && last.type !== 'redacted_thinking') {
    last.cache_control = ephemeral;
  }
}

/**
 * Builds the Messages API request for one turn.
 *
 * - `system` is the instructions as one text block; `tools` the definitions in order.
 * - Prompt caching (on unless `cache: false` on the provider or in `providerOptions.anthropic`)
 *   puts `cache_control: { type: 'ephemeral' }` on the last tool definition, on the system block
 *   and on the last block of the final user turn, so every turn of an agent's loop reads the
 *   previous turn's prefix from the cache. Prefixes shorter than the model's minimum are simply
 *   not cached.
 * - `max_tokens` is `settings.maxOutputTokens`, else {@link defaultMaxOutputTokens} plus the
 *   manual thinking budget, since thinking tokens count toward it.
 * - `stop_sequences` come from `settings.stopSequences`. `temperature`, `topP` and `seed` are not
 *   sent: the API version the SDK speaks (2026-10-21) rejects sampling parameters on every model.
 * - `output` becomes `output_config.format` (structured outputs), merged with any
 *   `providerOptions.anthropic.output_config` such as `effort`.
 * - Every other `providerOptions.anthropic` field is copied into the body unchanged.
 */
export function anthropicRequestBody(
  modelId: string,
  request: ModelRequest,
  isCacheOn: boolean,
): AnthropicRequestBody {
  const options = parseProviderOptions(request.providerOptions?.anthropic);
  const cache = options.cache ?? isCacheOn;
  const { output_config: outputConfig, ...passthrough } = options.body;

  const messages = toAnthropicMessages(request.messages);
  const lastTurn = messages.at(-1);
  if (cache && lastTurn?.role === 'user') markLastBlock(lastTurn.content);

  const tools: Anthropic.Tool[] = request.tools.map((tool, index) => ({
    name: tool.name,
    ...(tool.description === '' ? {} : { description: tool.description }),
    input_schema: tool.inputSchema as Anthropic.Tool.InputSchema,
    ...(cache && index === request.tools.length - 1 ? { cache_control: ephemeral } : {}),
  }));

  const system: Anthropic.TextBlockParam[] =
    request.instructions === ''
      ? []
      : [{ type: 'text', text: request.instructions, ...(cache ? { cache_control: ephemeral } : {}) }];

  const settings = request.settings ?? {};
  const maxTokens =
    settings.maxOutputTokens ?? defaultMaxOutputTokens(modelId) + thinkingBudget(passthrough.thinking);

  let outputConfigField: { output_config?: unknown } = {};
  if (request.output !== undefined) {
    const format = outputFormat(request.output);
    outputConfigField = { output_config: { ...(isObject(outputConfig) ? outputConfig : {}), format } };
  } else if (outputConfig !== undefined) {
    outputConfigField = { output_config: outputConfig };
  }

  return {
    model: modelId,
    max_tokens: maxTokens,
    messages,
    ...(system.length > 0 ? { system } : {}),
    ...(tools.length > 0 ? { tools } : {}),
    ...(settings.stopSequences !== undefined && settings.stopSequences.length > 0
      ? { stop_sequences: [...settings.stopSequences] }
      : {}),
    ...passthrough,
    ...outputConfigField,
    stream: true,
  } as AnthropicRequestBody;
}
