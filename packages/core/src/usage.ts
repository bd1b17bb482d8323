/** Token counts as a provider reports them; a count the provider did not report is left out. */
export interface UsageInit {
  inputTokens?: number | undefined;
  outputTokens?: number | undefined;
  cacheReadTokens?: number | undefined;
  cacheWriteTokens?: number | undefined;
  reasoningTokens?: number | undefined;
  totalTokens?: number | undefined;
}

function sum(left: number | undefined, right: number | undefined): number | undefined {
  if (left === undefined) return right;
  if (right === undefined) return left;
  return left + right;
}

/**
 * Normalised token usage. A count the provider did not report is `undefined`, never 0, so
 * "unknown" and "none" stay apart. Instances are immutable; {@link Usage.add} returns a new one.
 *
 * @example
 * ```ts
 * const total = new Usage({ inputTokens: 10 }).add(new Usage({ inputTokens: 5, outputTokens: 2 }));
 * total.inputTokens; // 15
 * total.totalTokens; // 17
 * ```
 */
export class Usage {
  /** Usage with every count unknown. */
  static readonly empty: Usage = new Usage();

  readonly inputTokens: number | undefined;
  readonly outputTokens: number | undefined;
  readonly cacheReadTokens: number | undefined;
  readonly cacheWriteTokens: number | undefined;
  readonly reasoningTokens: number | undefined;
  /** The provider's total, or input plus output when it reported none. */
  readonly totalTokens: number | undefined;

  constructor(init: UsageInit = {}) {
    this.inputTokens = init.inputTokens;
    this.outputTokens = init.outputTokens;
    this.cacheReadTokens = init.cacheReadTokens;
    this.cacheWriteTokens = init.cacheWriteTokens;
    this.reasoningTokens = init.reasoningTokens;
    this.totalTokens = init.totalTokens ?? sum(init.inputTokens, init.outputTokens);
    Object.freeze(this);
  }

  /** The sum of this usage and `other`, count by count; unknown plus unknown stays unknown. */
  add(other: Usage | UsageInit): Usage {
    return new Usage({
      inputTokens: sum(this.inputTokens, other.inputTokens),
      outputTokens: sum(this.outputTokens, other.outputTokens),
      cacheReadTokens: sum(this.cacheReadTokens, other.cacheReadTokens),
      cacheWriteTokens: sum(this.cacheWriteTokens, other.cacheWriteTokens),
      reasoningTokens: sum(this.reasoningTokens, other.reasoningTokens),
      totalTokens: sum(this.totalTokens, other.totalTokens ?? sum(other.inputTokens, other.outputTokens)),
    });
  }

  /** A plain object with only the counts that are known. */
  toJSON(): UsageInit {
    const json: UsageInit = {};
    for (const key of [
      'inputTokens',
      'outputTokens',
      'cacheReadTokens',
      'cacheWriteTokens',
      'reasoningTokens',
      'totalTokens',
    ] as const) {
      const value = this[key];
      if (value !== undefined) json[key] = value;
    }
    return json;
  }
}
