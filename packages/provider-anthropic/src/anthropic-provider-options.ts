import type { JsonObject, JsonValue } from '@ghost/core';
import { ModelError } from '@ghost/core/provider';

/**
 * What `providerOptions.anthropic` may hold, on an agent, an `ask` or a request. `cache` is
 * Ghost's own switch; every other field goes into the Messages API request body unchanged, so
 * any field the API has (`tool_choice`, `metadata`, `service_tier`, `output_config.effort`, ...)
 * can be set without waiting for Ghost to know it.
 *
 * @example
 * ```ts
 * const providerOptions = {
 *   anthropic: { thinking: { type: 'enabled', budget_tokens: 4_096 } },
 * } satisfies { anthropic: AnthropicProviderOptions };
 * ```
 */
export interface AnthropicProviderOptions {
  /**
   * Prompt caching for this request: `false` sends no `cache_control` marker. Default: the
   * provider's `cache` setting, which is on.
   */
  readonly cache?: boolean;
  /**
   * Extended thinking: `{ type: 'enabled', budget_tokens: 4096 }` (at least 1,024, and below
   * `max_tokens`), or `{ type: 'adaptive' }` on models that decide for themselves. The thinking
   * streams as reasoning, and its signed blocks go back to Anthropic on the next turn.
   */
  readonly thinking?: JsonObject;
  /** Any other Messages API field, sent as given. */
  readonly [field: string]: JsonValue | undefined;
}

/** Fields Ghost builds from the request itself; setting them here would contradict it. */
const reservedFields = new Set(['model', 'messages', 'stream', 'system', 'tools']);

/** The provider options, split into Ghost's own switch and the fields sent to the API. */
export interface ParsedProviderOptions {
  readonly cache: boolean | undefined;
  readonly body: JsonObject;
}

/** Reads `providerOptions.anthropic`, rejecting what cannot work before anything is sent. */
export function parseProviderOptions(options: JsonObject | undefined): ParsedProviderOptions {
  if (options === undefined) return { cache: undefined, body: {} };
  const body: Record<string, JsonValue> = {};
  let cache: boolean | undefined;
  for (const [field, value] of Object.entries(options)) {
    if (value === undefined) continue;
    if (field === 'cache') {
      if (typeof value !== 'boolean')
        throw invalidOption(`cache must be true or false, got ${JSON.stringify(value)}`);
      cache = value;
      continue;
    }
    if (reservedFields.has(field)) {
      throw invalidOption(
        `'${field}' is built by Ghost from the agent (model, instructions, messages, tools); set it there`,
      );
    }
    body[field] = value;
  }
  const thinking = body.thinking;
  if (
    thinking !== undefined &&
    (typeof thinking !== 'object' || thinking === null || Array.isArray(thinking))
  ) {
    throw invalidOption(`thinking must be an object such as { type: 'enabled', budget_tokens: 4096 }`);
  }
  return { cache, body };
}

function invalidOption(problem: string): ModelError {
  return new ModelError(`providerOptions.anthropic: ${problem}.`, {
    code: 'MODEL_OPTIONS_INVALID',
    provider: 'anthropic',
  });
}
