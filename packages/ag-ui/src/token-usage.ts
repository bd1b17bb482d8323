import type { TokenUsage } from '@ag-ui/core';
import type { Usage } from '@ghost/core';

/**
 * A run's usage as AG-UI token usage: one entry for the agent's model. Ghost and AG-UI count the
 * same way (input includes cache reads and writes, output includes reasoning), so counts copy
 * across; a count the provider did not report stays out. `undefined` when nothing was reported.
 */
export function tokenUsageOf(
  usage: Usage,
  model: { readonly provider?: string | undefined; readonly modelId?: string | undefined },
): TokenUsage[] | undefined {
  const counts: TokenUsage = {
    ...(usage.inputTokens === undefined ? {} : { inputTokens: usage.inputTokens }),
    ...(usage.outputTokens === undefined ? {} : { outputTokens: usage.outputTokens }),
    ...(usage.totalTokens === undefined ? {} : { totalTokens: usage.totalTokens }),
    ...(usage.reasoningTokens === undefined ? {} : { reasoningTokens: usage.reasoningTokens }),
    ...(usage.cacheReadTokens === undefined ? {} : { cachedInputTokens: usage.cacheReadTokens }),
    ...(usage.cacheWriteTokens === undefined ? {} : { cacheWriteInputTokens: usage.cacheWriteTokens }),
  };
  if (Object.keys(counts).length === 0) return undefined;
  return [
    {
      ...(model.provider === undefined ? {} : { provider: model.provider }),
      ...(model.modelId === undefined ? {} : { model: model.modelId }),
      ...counts,
    },
  ];
}
