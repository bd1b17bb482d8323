/**
 * Ghost provider names, and the prefixes of AI SDK provider names (`openai.responses`,
 * `google.generative-ai`), that stand for one of the conventions' well-known providers. The
 * conventions require those values where they apply; any other provider keeps its own name.
 */
const wellKnownProviders: readonly (readonly [prefix: string, name: string])[] = [
  ['openai', 'openai'],
  ['azure', 'azure.ai.openai'],
  ['anthropic', 'anthropic'],
  ['amazon-bedrock', 'aws.bedrock'],
  ['bedrock', 'aws.bedrock'],
  ['google.vertex', 'gcp.vertex_ai'],
  ['google', 'gcp.gemini'],
  ['vertex', 'gcp.vertex_ai'],
  ['mistral', 'mistral_ai'],
  ['groq', 'groq'],
  ['xai', 'x_ai'],
  ['deepseek', 'deepseek'],
  ['cohere', 'cohere'],
  ['perplexity', 'perplexity'],
  ['moonshot', 'moonshot_ai'],
];

/**
 * The `gen_ai.provider.name` for a model's `provider`: `openai` for Ghost's `openai` and
 * `openai-chat` and the AI SDK's `openai.chat`, `anthropic` for `anthropic.messages`, and so on.
 * A local OpenAI-compatible server (`openai-compatible`, or the name it was given) is not OpenAI,
 * so it keeps its own name.
 */
export function genAIProviderName(provider: string): string {
  const lower = provider.toLowerCase();
  if (hasPrefix(lower, 'openai-compatible')) return provider;
  for (const [prefix, name] of wellKnownProviders) if (hasPrefix(lower, prefix)) return name;
  return provider;
}

function hasPrefix(name: string, prefix: string): boolean {
  return name === prefix || name.startsWith(`${prefix}.`) || name.startsWith(`${prefix}-`);
}
