/**
 * The `max_tokens` sent when the request sets no `maxOutputTokens`: 8,192, or 4,096 for the Claude
 * 3 models (Haiku, Sonnet, Opus) that cannot produce more. The Messages API requires a value.
 * It is not each model's maximum on purpose: it bounds what a runaway answer costs and how long it
 * streams, while leaving room for ordinary answers and code-mode programs. Set `maxOutputTokens`
 * for longer answers; an answer cut by the limit finishes with reason `length`.
 */
export function defaultMaxOutputTokens(modelId: string): number {
  // claude-3-haiku-20240307, claude-3-opus-..., but not claude-3-5-* or claude-3-7-*.
  if (/^claude-3-(haiku|sonnet|opus)/.test(modelId)) return 4_096;
  return 8_192;
}
