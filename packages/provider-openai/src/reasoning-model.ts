/**
 * Whether an OpenAI model id names a reasoning model (o-series, GPT-5 and its variants other
 * than `gpt-5-chat`, codex models). Those return encrypted reasoning that must go back on the
 * next turn, and reject sampling settings such as `temperature`.
 */
export function isOpenAIReasoningModel(modelId: string): boolean {
  const id = modelId.toLowerCase();
  if (/^gpt-5(\.\d+)?-chat/.test(id)) return false;
  return /^(o\d|gpt-5|codex)/.test(id);
}
