import type { ModelV1 } from './model.js';
import { type PluginErrorFacts, PluginInvalidError, PluginVersionError } from './plugin-errors.js';
import { versionAdvice } from './specification-version.js';

/**
 * Checks that what a provider returned (or what was registered under a name) is a `model-v1`
 * model. `subject` starts the message, such as `Model 'local'`.
 */
export function checkModel(
  model: unknown,
  subject: string,
  facts: PluginErrorFacts = {},
): asserts model is ModelV1 {
  const specificationVersion =
    typeof model === 'object' && model !== null
      ? (model as { specificationVersion?: unknown }).specificationVersion
      : undefined;
  if (specificationVersion !== 'model-v1') {
    throw new PluginVersionError(
      `${subject} implements specification '${String(specificationVersion)}', but this @ghost/core supports 'model-v1'. ${versionAdvice(String(specificationVersion), 'model-v1', undefined)}`,
      { ...facts, specificationVersion, supportedVersion: 'model-v1' },
    );
  }
  if (typeof (model as { stream?: unknown }).stream !== 'function') {
    throw new PluginInvalidError(`${subject} has no stream() method.`, facts);
  }
}
