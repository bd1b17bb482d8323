import type { ModelProviderV1 } from './plugin.js';
import { completePlugin, type PluginDeclaration } from './plugin-declaration.js';

/**
 * Declares a model provider: fills in `kind: 'model'` and `specificationVersion: 'model-v1'` when
 * left out, checks its shape, and returns it frozen and typed (as every `define*` helper of a
 * plugin does).
 *
 * @example
 * ```ts
 * export default defineModelProvider({ name: 'echo', languageModel });
 * ```
 */
export function defineModelProvider<Declared extends PluginDeclaration<ModelProviderV1>>(
  provider: Declared,
): Declared & ModelProviderV1 {
  return completePlugin(provider, { kind: 'model', specificationVersion: 'model-v1' });
}
