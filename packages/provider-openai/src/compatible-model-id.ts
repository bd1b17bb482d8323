import { ConfigurationError } from '@ghost/core';

/** A compatible model id split into the server's base URL and the model's name there. */
export interface CompatibleModelId {
  readonly baseURL: string;
  readonly model: string;
}

/**
 * Splits an `openai-compatible` model id, `<baseURL>#<model>` (such as
 * `http://127.0.0.1:11434/v1#qwen2.5-coder`), at its `#`. Anything else is a
 * `ConfigurationError` that shows the expected form.
 */
export function parseCompatibleModelId(modelId: string): CompatibleModelId {
  const hash = typeof modelId === 'string' ? modelId.indexOf('#') : -1;
  const baseURL = hash > 0 ? modelId.slice(0, hash) : '';
  const model = hash > 0 ? modelId.slice(hash + 1).trim() : '';
  let isHttp = false;
  try {
    const protocol = new URL(baseURL).protocol;
    isHttp = protocol === 'http:' || protocol === 'https:';
  } catch {
    isHttp = false;
  }
  if (!isHttp || model === '') {
    throw new ConfigurationError(
      `Model id ${JSON.stringify(modelId)} is not one 'openai-compatible' understands: write the server's base URL, '#', and the model's name, such as 'openai-compatible:http://127.0.0.1:11434/v1#qwen2.5-coder'.`,
      { code: 'MODEL_ID_INVALID', provider: 'openai-compatible', modelId },
    );
  }
  return { baseURL, model };
}
