import type { UsageInit } from '@ghost/core/provider';

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function sumKnown(first: number | undefined, ...rest: (number | undefined)[]): number | undefined {
  if (first === undefined) return undefined;
  return rest.reduce<number>((total, value) => total + (value ?? 0), first);
}

/**
 * Ghost's usage from the usage of an AI SDK `finish` part, or `undefined` when it reports no count.
 *
 * `v3` and `v4` report `inputTokens: { total, noCache, cacheRead, cacheWrite }` and
 * `outputTokens: { total, text, reasoning }`, where the input total counts every input token,
 * cached or not, for every provider (the AI SDK normalises Anthropic's, which excludes cache
 * reads and writes); Ghost's `inputTokens` is that total, and the cache counts stay separate.
 * `v2` reports flat counts (`inputTokens`, `outputTokens`, `totalTokens`, `reasoningTokens`,
 * `cachedInputTokens`) as each provider defines them. A count the model did not report stays
 * `undefined`, never 0.
 */
export function usageFromAISDK(usage: unknown): UsageInit | undefined {
  if (typeof usage !== 'object' || usage === null) return undefined;
  const fields = usage as Record<string, unknown>;
  const init =
    typeof fields.inputTokens === 'object' || typeof fields.outputTokens === 'object'
      ? nestedUsage(fields)
      : flatUsage(fields);
  const known = Object.entries(init).filter(([, value]) => value !== undefined);
  return known.length === 0 ? undefined : (Object.fromEntries(known) as UsageInit);
}

function nestedUsage(fields: Record<string, unknown>): UsageInit {
  const input = (fields.inputTokens ?? {}) as Record<string, unknown>;
  const output = (fields.outputTokens ?? {}) as Record<string, unknown>;
  const cacheReadTokens = count(input.cacheRead);
  const cacheWriteTokens = count(input.cacheWrite);
  const reasoningTokens = count(output.reasoning);
  return {
    inputTokens: count(input.total) ?? sumKnown(count(input.noCache), cacheReadTokens, cacheWriteTokens),
    outputTokens: count(output.total) ?? sumKnown(count(output.text), reasoningTokens),
    cacheReadTokens,
    cacheWriteTokens,
    reasoningTokens,
  };
}

function flatUsage(fields: Record<string, unknown>): UsageInit {
  return {
    inputTokens: count(fields.inputTokens),
    outputTokens: count(fields.outputTokens),
    cacheReadTokens: count(fields.cachedInputTokens),
    reasoningTokens: count(fields.reasoningTokens),
    totalTokens: count(fields.totalTokens),
  };
}
