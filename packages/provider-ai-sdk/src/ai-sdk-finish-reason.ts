import type { ModelFinishReason } from '@ghost/core/provider';

/** Why the model stopped, in Ghost's terms, with the provider's own value kept. */
export interface AISDKFinish {
  readonly reason: ModelFinishReason;
  readonly rawReason?: string;
}

const ghostReasons: ReadonlySet<string> = new Set<ModelFinishReason>([
  'stop',
  'tool-calls',
  'length',
  'content-filter',
  'error',
  'other',
]);

/**
 * Ghost's finish reason from an AI SDK one: `v3` and `v4` send `{ unified, raw }` (the raw value,
 * such as `end_turn` or `max_output_tokens`, becomes `rawReason`), `v2` a bare string (kept as
 * `rawReason` too, since it is all there is). `v2`'s `unknown` becomes `other`. `v4`'s
 * `interrupted` (the provider's stream ended without its completion signal) returns `undefined`:
 * the answer is incomplete, which the caller reports as an error, never as a finish.
 */
export function finishFromAISDK(finishReason: unknown): AISDKFinish | undefined {
  if (typeof finishReason === 'string') return { reason: ghostReason(finishReason), rawReason: finishReason };
  if (typeof finishReason !== 'object' || finishReason === null) return { reason: 'other' };
  const { unified, raw } = finishReason as { unified?: unknown; raw?: unknown };
  if (unified === 'interrupted') return undefined;
  const reason = typeof unified === 'string' ? ghostReason(unified) : 'other';
  return typeof raw === 'string' ? { reason, rawReason: raw } : { reason };
}

function ghostReason(value: string): ModelFinishReason {
  return ghostReasons.has(value) ? (value as ModelFinishReason) : 'other';
}
