import type { ModelProviderV1 } from './plugin.js';
import { validatePlugin } from './validate-plugin.js';

/**
 * Declares a model provider: returns it unchanged, typed, after checking its shape.
 *
 * @example
 * ```ts
 * export default defineModelProvider({ kind: 'model', specificationVersion: 'model-v1', name: 'echo', languageModel });
 * ```
 */
export function defineModelProvider<Provider extends ModelProviderV1>(provider: Provider): Provider {
  validatePlugin(provider, { kind: 'model' });
  return provider;
}
