import type { ModelV1 } from './model.js';
import type { SandboxBackendV1 } from './sandbox.js';
import type { SessionStoreV1 } from './session-store.js';

/**
 * The base every engine plugin shares: kind, name and specification version. The engine
 * contract itself (`EngineV1`, made with `defineEngine` or `defineHostEngine`) lives in
 * `@ghost/code-mode`, so core can register and find engines without depending on code mode.
 */
export interface EnginePlugin {
  readonly kind: 'engine';
  readonly specificationVersion: 'engine-v1';
  /** The name users configure, such as `quickjs`. */
  readonly name: string;
}

/**
 * A model provider plugin: turns a model id into a {@link ModelV1}. `registry.model('openai:gpt-5')`
 * finds the provider `openai` and calls `languageModel('gpt-5')`.
 *
 * @example
 * ```ts
 * const echoProvider = defineModelProvider({
 *   kind: 'model',
 *   specificationVersion: 'model-v1',
 *   name: 'echo',
 *   languageModel: (modelId) => createEchoModel(modelId),
 * });
 * ```
 */
export interface ModelProviderV1 {
  readonly kind: 'model';
  readonly specificationVersion: 'model-v1';
  /** The provider name, the part before the colon in `'openai:gpt-5'`. */
  readonly name: string;
  /** Returns the model with this id. Throws when the provider has no such model. */
  languageModel(modelId: string): ModelV1;
}

/** Any plugin a `Registry` holds. */
export type Plugin = EnginePlugin | SandboxBackendV1 | ModelProviderV1 | SessionStoreV1;

/** The kinds of plugin: `'engine'`, `'sandbox'`, `'model'` or `'session-store'`. */
export type PluginKind = Plugin['kind'];

/** The plugin type of each kind. */
export interface PluginsByKind {
  engine: EnginePlugin;
  sandbox: SandboxBackendV1;
  model: ModelProviderV1;
  'session-store': SessionStoreV1;
}

/** True for `'engine'`, `'sandbox'`, `'model'` and `'session-store'`. */
export function isPluginKind(value: unknown): value is PluginKind {
  return value === 'engine' || value === 'sandbox' || value === 'model' || value === 'session-store';
}

const kindLabels: { readonly [Kind in PluginKind]: string } = {
  engine: 'Engine',
  sandbox: 'Sandbox backend',
  model: 'Model provider',
  'session-store': 'Session store',
};

const kindNouns: { readonly [Kind in PluginKind]: string } = {
  engine: 'an engine',
  sandbox: 'a sandbox backend',
  model: 'a model provider',
  'session-store': 'a session store',
};

const kindOptions: { readonly [Kind in PluginKind]: string } = {
  engine: 'engines: [...]',
  sandbox: 'sandboxes: [...]',
  model: 'models: [...]',
  'session-store': 'sessionStore',
};

/** The `createRuntime` option that takes plugins of a kind, as messages write it: `sandboxes: [...]`. */
export function kindOption(kind: PluginKind): string {
  return kindOptions[kind];
}

/** How messages name a kind at the start of a sentence: `Sandbox backend`. */
export function kindLabel(kind: PluginKind): string {
  return kindLabels[kind];
}

/** How messages name one plugin of a kind: `a sandbox backend`. */
export function kindNoun(kind: PluginKind): string {
  return kindNouns[kind];
}

/** How messages name a plugin: `Sandbox backend 'jail'`. */
export function pluginLabel(kind: PluginKind, name: string): string {
  return `${kindLabels[kind]} '${name}'`;
}

// No ':' because a model reference splits at its first colon; no spaces or slashes so names
// read the same in configuration, messages and logs.
/** What a plugin name (and a registered model's name) may look like. */
export const pluginNamePattern = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
