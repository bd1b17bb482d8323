/**
 * The schema name OpenAI accepts for structured output: letters, digits, `_` and `-`, at most
 * 64 characters. Other characters become `_`; no name gives `output`.
 */
export function structuredOutputName(name: string | undefined): string {
  const cleaned = (name ?? '').replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
  return cleaned === '' ? 'output' : cleaned;
}
