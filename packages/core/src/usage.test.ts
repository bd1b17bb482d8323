import { describe, expect, it } from 'vitest';
import { Usage } from './usage.js';

describe('Usage', () => {
  it('keeps unreported counts undefined, never 0', () => {
    const usage = new Usage({ inputTokens: 12 });
    expect(usage.outputTokens).toBeUndefined();
    expect(usage.cacheReadTokens).toBeUndefined();
    expect(usage.reasoningTokens).toBeUndefined();
    expect(usage.totalTokens).toBe(12);
    expect(Usage.empty.totalTokens).toBeUndefined();
  });

  it('adds count by count, unknown plus unknown staying unknown', () => {
    const total = new Usage({ inputTokens: 10, cacheReadTokens: 4 }).add(
      new Usage({ inputTokens: 5, outputTokens: 2, reasoningTokens: 1 }),
    );
    expect(total.toJSON()).toEqual({
      inputTokens: 15,
      outputTokens: 2,
      cacheReadTokens: 4,
      reasoningTokens: 1,
      totalTokens: 17,
    });
    expect(total.cacheWriteTokens).toBeUndefined();
  });

  it('prefers a reported total and is immutable', () => {
    const usage = new Usage({ inputTokens: 1, outputTokens: 1, totalTokens: 5 });
    expect(usage.totalTokens).toBe(5);
    expect(usage.add({ totalTokens: 3 }).totalTokens).toBe(8);
    expect(Object.isFrozen(usage)).toBe(true);
  });
});
