import {
  isPluginKind,
  kindLabel,
  kindNoun,
  type Plugin,
  type PluginKind,
  pluginLabel,
  pluginNamePattern,
} from './plugin.js';
import { PluginInvalidError, PluginVersionError } from './plugin-errors.js';
import { currentSpecificationVersions, versionAdvice } from './specification-version.js';

/** Where a plugin came from, so a message can name its package. */
export interface PluginOrigin {
  /** The kind the caller expects; a plugin of another kind is rejected. */
  readonly kind?: PluginKind;
  /** The package a lazily loaded plugin came from. */
  readonly packageName?: string;
}

const requiredMethods: { readonly [Kind in PluginKind]: readonly string[] } = {
  engine: [],
  sandbox: ['detect', 'spawn'],
  model: ['languageModel'],
  'session-store': ['open', 'list', 'delete', 'prune', 'close'],
};

/**
 * Checks that `value` is a well-formed plugin of exactly the specification version this core
 * implements; any other version is refused with a `PluginVersionError` naming the expected one.
 * @internal shared by the `define*` helpers and the registry; not part of the public surface.
 */
export function validatePlugin(value: unknown, origin: PluginOrigin = {}): asserts value is Plugin {
  const from = origin.packageName === undefined ? '' : ` (from ${origin.packageName})`;
  if (typeof value !== 'object' || value === null) {
    throw new PluginInvalidError(
      `Expected a plugin object${from} with kind, name and specificationVersion, got ${value === null ? 'null' : typeof value}.`,
      { packageName: origin.packageName },
    );
  }
  const candidate = value as Record<string, unknown>;
  const { kind, name, specificationVersion } = candidate;
  if (!isPluginKind(kind)) {
    throw new PluginInvalidError(
      `Plugin${from} has kind ${JSON.stringify(kind)}: use 'engine', 'sandbox', 'model' or 'session-store'.`,
      { kind, packageName: origin.packageName },
    );
  }
  if (origin.kind !== undefined && kind !== origin.kind) {
    throw new PluginInvalidError(
      `Expected ${kindNoun(origin.kind)} plugin${from}, got a plugin of kind '${kind}'.`,
      { kind, expectedKind: origin.kind, packageName: origin.packageName },
    );
  }
  if (typeof name !== 'string' || !pluginNamePattern.test(name)) {
    throw new PluginInvalidError(
      `${kindLabel(kind)} name ${JSON.stringify(name)}${from} is invalid: use letters, digits, '.', '_' or '-', starting with a letter or digit.`,
      { kind, pluginName: name, packageName: origin.packageName },
    );
  }
  const supported = currentSpecificationVersions[kind];
  if (specificationVersion !== supported) {
    const found = String(specificationVersion);
    throw new PluginVersionError(
      `${pluginLabel(kind, name)}${from} implements specification '${found}', but this @ghost/core supports '${supported}'. ${versionAdvice(found, supported, origin.packageName)}`,
      {
        kind,
        pluginName: name,
        specificationVersion,
        supportedVersion: supported,
        packageName: origin.packageName,
      },
    );
  }
  for (const method of requiredMethods[kind]) {
    if (typeof candidate[method] !== 'function') {
      throw new PluginInvalidError(`${pluginLabel(kind, name)}${from} has no ${method}() method.`, {
        kind,
        pluginName: name,
        method,
        packageName: origin.packageName,
      });
    }
  }
  if (kind === 'session-store') checkSessionLimits(candidate.limits, name, from);
  if (kind === 'sandbox' && !Array.isArray(candidate.platforms)) {
    throw new PluginInvalidError(
      `${pluginLabel(kind, name)}${from} needs platforms, the list of platforms it supports, such as ['linux'].`,
      { kind, pluginName: name, packageName: origin.packageName },
    );
  }
}

function checkSessionLimits(limits: unknown, name: string, from: string): void {
  const candidate = (typeof limits === 'object' && limits !== null ? limits : {}) as Record<string, unknown>;
  for (const key of ['maxMessages', 'maxMessageBytes', 'maxSessionBytes', 'maxStateBytes', 'maxPauseBytes']) {
    const value = candidate[key];
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
      throw new PluginInvalidError(
        `${pluginLabel('session-store', name)}${from} needs limits.${key}, a whole number of at least 1 (see defaultSessionLimits).`,
        { kind: 'session-store', pluginName: name },
      );
    }
  }
}
