/**
 * The `openai-compatible` registry plugin (default export), which Ghost loads for model ids
 * such as `'openai-compatible:http://127.0.0.1:11434/v1#qwen2.5-coder'`: the server's base URL,
 * `#`, and the model's name there. No key is sent; for a server that needs one, use
 * {@link createOpenAICompatible} and register its `plugin`.
 *
 * @example
 * ```ts
 * import { defineAgent } from '@ghost/core';
 *
 * const agent = defineAgent({ name: 'local', model: 'openai-compatible:http://127.0.0.1:11434/v1#qwen2.5-coder' });
 * ```
 *
 * @packageDocumentation
 */

import type { ModelV1 } from '@ghost/core';
import { defineModelProvider, type ModelProviderV1 } from '@ghost/core/provider';
import { parseCompatibleModelId } from './compatible-model-id.js';
import { type CompatibleModelFactory, compatibleModelFactory } from './openai-compatible-provider.js';

export {
  createOpenAICompatible,
  type OpenAICompatibleProvider,
  type OpenAICompatibleSettings,
} from './openai-compatible-provider.js';

const factories = new Map<string, CompatibleModelFactory>();

function languageModel(modelId: string): ModelV1 {
  const { baseURL, model } = parseCompatibleModelId(modelId);
  let factory = factories.get(baseURL);
  if (factory === undefined) {
    factory = compatibleModelFactory({ name: 'openai-compatible', baseURL });
    factories.set(baseURL, factory);
  }
  return factory(model, modelId);
}

/** The `openai-compatible` model provider: model ids are `<baseURL>#<model>`. */
const openaiCompatible: ModelProviderV1 = defineModelProvider({
  kind: 'model',
  specificationVersion: 'model-v1',
  name: 'openai-compatible',
  languageModel,
});

export default openaiCompatible;
