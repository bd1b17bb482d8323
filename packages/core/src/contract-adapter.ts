import { isPluginKind, type PluginKind, pluginLabel } from './plugin.js';
import { PluginInvalidError } from './plugin-errors.js';
import { currentSpecificationVersions } from './specification-version.js';

/**
 * Turns a plugin written for one specification version of a contract into a plugin of the next,
 * so the registry keeps accepting plugins built for an older contract after it changes. When
 * `engine-v2` replaces `engine-v1`, code that publishes it adds `{ kind: 'engine', from:
 * 'engine-v1', to: 'engine-v2', adapt }`; adapters chain, so a `v1` plugin reaches `v3` through
 * the `v1 → v2` and `v2 → v3` adapters. See docs/architecture.md ("Plugin contracts and their versions").
 *
 * @example
 * ```ts
 * const modelV0: ContractAdapter = {
 *   kind: 'model',
 *   from: 'model-v0',
 *   to: 'model-v1',
 *   adapt: (old) => ({ ...old, specificationVersion: 'model-v1', languageModel: (id) => old.createModel(id) }),
 * };
 * const registry = new Registry({ contractAdapters: [modelV0] });
 * ```
 */
export interface ContractAdapter {
  readonly kind: PluginKind;
  /** The specification version this adapter reads, such as `'engine-v1'`. */
  readonly from: string;
  /** The specification version of the plugin it returns, such as `'engine-v2'`. */
  readonly to: string;
  /**
   * Returns the plugin as a `to` plugin, keeping its kind and name. It gets the plugin object
   * (a `from` plugin of this kind, otherwise unchecked) and must not change it.
   */
  adapt(plugin: Readonly<Record<string, unknown>>): unknown;
}

/**
 * The adapters Ghost ships: one for each contract change since a contract was first published.
 * Every contract is at its first version (`engine-v1`, `sandbox-v1`, `model-v1`), so it is
 * empty; the change that publishes a new version adds the adapter from the one before.
 */
export const builtinContractAdapters: readonly ContractAdapter[] = Object.freeze([]);

/** Checks an adapter given to the registry, so a mistake fails where it is configured. */
export function checkContractAdapter(adapter: unknown): asserts adapter is ContractAdapter {
  const candidate = (typeof adapter === 'object' && adapter !== null ? adapter : {}) as Record<
    string,
    unknown
  >;
  const { kind, from, to, adapt } = candidate;
  if (
    !isPluginKind(kind) ||
    typeof from !== 'string' ||
    typeof to !== 'string' ||
    from === to ||
    typeof adapt !== 'function'
  ) {
    throw new PluginInvalidError(
      `A contract adapter needs kind ('engine', 'sandbox' or 'model'), from and to (two different specification versions, such as 'engine-v1' and 'engine-v2') and an adapt(plugin) function; got ${describe(adapter)}.`,
      { kind, adapterFrom: from, adapterTo: to },
    );
  }
}

function describe(value: unknown): string {
  if (typeof value !== 'object' || value === null) return value === null ? 'null' : typeof value;
  const { kind, from, to, adapt } = value as Record<string, unknown>;
  return `{ kind: ${JSON.stringify(kind)}, from: ${JSON.stringify(from)}, to: ${JSON.stringify(to)}, adapt: ${typeof adapt} }`;
}

/**
 * Brings a plugin of an older specification version to the current one through `adapters`,
 * one step at a time. Anything else (the current version, a version no adapter reads, a value
 * that is not a plugin at all) comes back unchanged for `validatePlugin` to accept or explain.
 * An adapter that throws, or returns something that is not a plugin of its `to` version and of
 * the same kind and name, is reported as a `PluginInvalidError` naming the adapter.
 */
export function adaptPlugin(value: unknown, adapters: readonly ContractAdapter[]): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const { kind, name } = value as Record<string, unknown>;
  if (!isPluginKind(kind)) return value;
  const current: string = currentSpecificationVersions[kind];
  let plugin = value as Readonly<Record<string, unknown>>;
  // Each version is left at most once, so a cycle of adapters (v1 → v2 → v1) cannot loop.
  const left = new Set<string>();
  for (;;) {
    const version = plugin.specificationVersion;
    if (version === current || typeof version !== 'string' || left.has(version)) return plugin;
    const adapter = adapters.find((each) => each.kind === kind && each.from === version);
    if (adapter === undefined) return plugin;
    left.add(version);
    plugin = applyAdapter(adapter, plugin, kind, name);
  }
}

function applyAdapter(
  adapter: ContractAdapter,
  plugin: Readonly<Record<string, unknown>>,
  kind: PluginKind,
  name: unknown,
): Readonly<Record<string, unknown>> {
  const label = pluginLabel(kind, String(name));
  const step = `'${adapter.from}' → '${adapter.to}'`;
  let adapted: unknown;
  try {
    adapted = adapter.adapt(plugin);
  } catch (error) {
    throw new PluginInvalidError(
      `${label} implements '${adapter.from}', and the contract adapter ${step} failed on it: ${String(error)}. Use a release of the plugin built for '${currentSpecificationVersions[kind]}'.`,
      { kind, pluginName: name, adapterFrom: adapter.from, adapterTo: adapter.to, cause: error },
    );
  }
  const result = (typeof adapted === 'object' && adapted !== null ? adapted : {}) as Record<string, unknown>;
  if (result.kind !== kind || result.name !== name || result.specificationVersion !== adapter.to) {
    throw new PluginInvalidError(
      `The contract adapter ${step} returned no '${adapter.to}' ${kind} plugin named '${String(name)}' for ${label}: an adapter must keep the kind and name and set specificationVersion to '${adapter.to}'.`,
      { kind, pluginName: name, adapterFrom: adapter.from, adapterTo: adapter.to },
    );
  }
  return result;
}
