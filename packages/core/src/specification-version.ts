import type { PluginKind, PluginsByKind } from './plugin.js';

/**
 * The specification version of each plugin contract this `@ghost/core` implements. A plugin's
 * `specificationVersion` must match it exactly: any other version, older or newer, is refused
 * with a `PluginVersionError` that names the version this core expects.
 */
export const currentSpecificationVersions: {
  readonly [Kind in PluginKind]: PluginsByKind[Kind]['specificationVersion'];
} = Object.freeze({
  engine: 'engine-v1',
  sandbox: 'sandbox-v1',
  model: 'model-v1',
  'session-store': 'session-store-v1',
});

/** The number at the end of a specification version: 2 for `'engine-v2'`. */
function specificationVersionNumber(version: string): number | undefined {
  const match = /-v(\d+)$/.exec(version);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

/** What to upgrade when a plugin implements `found` and this core supports `supported`. */
export function versionAdvice(found: string, supported: string, packageName: string | undefined): string {
  const plugin = packageName ?? 'the plugin';
  const foundNumber = specificationVersionNumber(found);
  const supportedNumber = specificationVersionNumber(supported);
  if (foundNumber !== undefined && supportedNumber !== undefined && foundNumber > supportedNumber) {
    return `Upgrade @ghost/core (and your other @ghost packages) to a release that supports '${found}'.`;
  }
  if (foundNumber !== undefined && supportedNumber !== undefined && foundNumber < supportedNumber) {
    return `Upgrade ${plugin} to a release built for '${supported}'.`;
  }
  return `Use a release of ${plugin} built for '${supported}'.`;
}
