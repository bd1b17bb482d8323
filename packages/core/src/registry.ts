import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ConfigurationError, type GhostErrorOptions, SandboxUnavailableError } from './errors.js';
import type { ModelV1 } from './model.js';
import type { SandboxBackendV1 } from './sandbox.js';

/**
 * The base every engine plugin shares. The full engine contract (`EngineV1`) lives in
 * `@ghost/code-mode` and extends this one, so core can register and find engines without
 * depending on code mode.
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

/** Any plugin a {@link Registry} holds. */
export type Plugin = EnginePlugin | SandboxBackendV1 | ModelProviderV1;

/** The kinds of plugin: `'engine'`, `'sandbox'` or `'model'`. */
export type PluginKind = Plugin['kind'];

/**
 * Imports a package by name and returns its module namespace, as `import(specifier)` does. A
 * package that is not installed must reject with Node's own error (code `ERR_MODULE_NOT_FOUND`
 * or `MODULE_NOT_FOUND`), which Ghost turns into a {@link PluginNotInstalledError}.
 */
export type ImportModule = (specifier: string) => Promise<unknown>;

/** The options of {@link Registry}'s constructor. */
export interface RegistryOptions {
  /**
   * How built-in plugin packages are imported. The default resolves them from the application's
   * directory (`process.cwd()`), then from `@ghost/core`'s own. Pass
   * `(specifier) => import(specifier)` to resolve from your own module instead.
   */
  readonly importModule?: ImportModule;
}

/** A plugin object is malformed: a missing name or method, an unknown kind, the wrong kind of plugin. */
export class PluginInvalidError extends ConfigurationError {
  constructor(message: string, options: Partial<GhostErrorOptions> = {}) {
    super(message, { code: 'PLUGIN_INVALID', ...options });
  }
}

/** A plugin implements a specification version this `@ghost/core` does not support. The message says what to upgrade. */
export class PluginVersionError extends ConfigurationError {
  constructor(message: string, options: Partial<GhostErrorOptions> = {}) {
    super(message, { code: 'PLUGIN_VERSION_UNSUPPORTED', ...options });
  }
}

/** A plugin of the same kind and name is already registered. */
export class PluginAlreadyRegisteredError extends ConfigurationError {
  constructor(message: string, options: Partial<GhostErrorOptions> = {}) {
    super(message, { code: 'PLUGIN_ALREADY_REGISTERED', ...options });
  }
}

/** No plugin of that kind and name is registered, and none is built in. The message lists those that are. */
export class PluginNotFoundError extends ConfigurationError {
  constructor(message: string, options: Partial<GhostErrorOptions> = {}) {
    super(message, { code: 'PLUGIN_NOT_FOUND', ...options });
  }
}

/** A built-in plugin's package is not installed. The message names the package to install. */
export class PluginNotInstalledError extends ConfigurationError {
  constructor(message: string, options: Partial<GhostErrorOptions> = {}) {
    super(message, { code: 'PLUGIN_NOT_INSTALLED', ...options });
  }
}

/** A built-in plugin's package is installed but failed to load: it threw while importing or while making its plugin. */
export class PluginLoadError extends ConfigurationError {
  constructor(message: string, options: Partial<GhostErrorOptions> = {}) {
    super(message, { code: 'PLUGIN_LOAD_FAILED', ...options });
  }
}

interface PluginsByKind {
  engine: EnginePlugin;
  sandbox: SandboxBackendV1;
  model: ModelProviderV1;
}

const supportedVersions: { readonly [Kind in PluginKind]: PluginsByKind[Kind]['specificationVersion'] } = {
  engine: 'engine-v1',
  sandbox: 'sandbox-v1',
  model: 'model-v1',
};

const requiredMethods: { readonly [Kind in PluginKind]: readonly string[] } = {
  engine: [],
  sandbox: ['detect', 'spawn'],
  model: ['languageModel'],
};

const kindLabels: { readonly [Kind in PluginKind]: string } = {
  engine: 'Engine',
  sandbox: 'Sandbox backend',
  model: 'Model provider',
};

const kindNouns: { readonly [Kind in PluginKind]: string } = {
  engine: 'an engine',
  sandbox: 'a sandbox backend',
  model: 'a model provider',
};

// Maps rather than object literals, so a name like 'constructor' cannot find Object.prototype.
const builtinPackages: { readonly [Kind in PluginKind]: ReadonlyMap<string, string> } = {
  engine: new Map([
    ['quickjs', '@ghost/engine-quickjs'],
    ['v8', '@ghost/engine-v8'],
  ]),
  sandbox: new Map([
    ['bwrap', '@ghost/sandbox-bwrap'],
    ['seatbelt', '@ghost/sandbox-seatbelt'],
    // Contains nothing; code mode depends on it and uses it only when it is named explicitly.
    ['unrestricted', '@ghost/sandbox-unrestricted'],
  ]),
  model: new Map([
    ['openai', '@ghost/provider-openai'],
    ['openai-chat', '@ghost/provider-openai/chat'],
    ['openai-compatible', '@ghost/provider-openai/compatible'],
    ['anthropic', '@ghost/provider-anthropic'],
  ]),
};

const nativeSandboxName = 'native';

// No ':' because a model reference splits at its first colon; no spaces or slashes so names
// read the same in configuration, messages and logs.
const pluginNamePattern = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

function isPluginKind(value: unknown): value is PluginKind {
  return value === 'engine' || value === 'sandbox' || value === 'model';
}

function pluginLabel(kind: PluginKind, name: string): string {
  return `${kindLabels[kind]} '${name}'`;
}

function versionNumber(version: string): number | undefined {
  const match = /-v(\d+)$/.exec(version);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

function versionAdvice(found: string, supported: string, packageName: string | undefined): string {
  const plugin = packageName ?? 'the plugin';
  const foundNumber = versionNumber(found);
  const supportedNumber = versionNumber(supported);
  if (foundNumber !== undefined && supportedNumber !== undefined && foundNumber > supportedNumber) {
    return `Upgrade @ghost/core (and your other @ghost packages) to a release that supports '${found}'.`;
  }
  if (foundNumber !== undefined && supportedNumber !== undefined && foundNumber < supportedNumber) {
    return `Upgrade ${plugin} to a release built for '${supported}'.`;
  }
  return `Use a release of ${plugin} built for '${supported}'.`;
}

/** Where a plugin came from, so a message can name its package. */
interface PluginOrigin {
  /** The kind the caller expects; a plugin of another kind is rejected. */
  readonly kind?: PluginKind;
  /** The package a lazily loaded plugin came from. */
  readonly packageName?: string;
}

/**
 * Checks that `value` is a well-formed plugin of a supported specification version.
 * @internal shared by the `define*` helpers and the registry; not part of the public surface.
 */
export function validatePlugin(value: unknown, origin: PluginOrigin = {}): asserts value is Plugin {
  const from = origin.packageName === undefined ? '' : ` (from ${origin.packageName})`;
  if (typeof value !== 'object' || value === null) {
    throw new PluginInvalidError(
      `Expected a plugin object${from} with kind, name and specificationVersion, got ${value === null ? 'null' : typeof value}.`,
      { details: { packageName: origin.packageName } },
    );
  }
  const candidate = value as Record<string, unknown>;
  const { kind, name, specificationVersion } = candidate;
  if (!isPluginKind(kind)) {
    throw new PluginInvalidError(
      `Plugin${from} has kind ${JSON.stringify(kind)}: use 'engine', 'sandbox' or 'model'.`,
      { details: { kind, packageName: origin.packageName } },
    );
  }
  if (origin.kind !== undefined && kind !== origin.kind) {
    throw new PluginInvalidError(
      `Expected ${kindNouns[origin.kind]} plugin${from}, got a plugin of kind '${kind}'.`,
      { details: { kind, expectedKind: origin.kind, packageName: origin.packageName } },
    );
  }
  if (typeof name !== 'string' || !pluginNamePattern.test(name)) {
    throw new PluginInvalidError(
      `${kindLabels[kind]} name ${JSON.stringify(name)}${from} is invalid: use letters, digits, '.', '_' or '-', starting with a letter or digit.`,
      { details: { kind, name, packageName: origin.packageName } },
    );
  }
  const supported = supportedVersions[kind];
  if (specificationVersion !== supported) {
    const found = String(specificationVersion);
    throw new PluginVersionError(
      `${pluginLabel(kind, name)}${from} implements specification '${found}', but this @ghost/core supports '${supported}'. ${versionAdvice(found, supported, origin.packageName)}`,
      {
        details: {
          kind,
          name,
          specificationVersion,
          supportedVersion: supported,
          packageName: origin.packageName,
        },
      },
    );
  }
  for (const method of requiredMethods[kind]) {
    if (typeof candidate[method] !== 'function') {
      throw new PluginInvalidError(`${pluginLabel(kind, name)}${from} has no ${method}() method.`, {
        details: { kind, name, method, packageName: origin.packageName },
      });
    }
  }
  if (kind === 'sandbox' && !Array.isArray(candidate.platforms)) {
    throw new PluginInvalidError(
      `${pluginLabel(kind, name)}${from} needs platforms, the list of platforms it supports, such as ['linux'].`,
      { details: { kind, name, packageName: origin.packageName } },
    );
  }
}

/**
 * Declares an engine plugin: returns it unchanged, typed, after checking its shape, so a
 * malformed engine fails where it is defined. `@ghost/code-mode` passes its full `EngineV1` type.
 *
 * @example
 * ```ts
 * export default defineEngine({ kind: 'engine', specificationVersion: 'engine-v1', name: 'tiny', createSession });
 * ```
 */
export function defineEngine<Engine extends EnginePlugin>(engine: Engine): Engine {
  validatePlugin(engine, { kind: 'engine' });
  return engine;
}

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

function errorCode(error: unknown): unknown {
  return typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
}

// Node quotes the specifier it could not find ("Cannot find package '@ghost/x' imported from ...").
// Matching the quoted name tells "the plugin package is missing" apart from "the plugin's own
// dependency or build output is missing", which is a load failure, not a missing install.
function isMissingPackage(error: unknown, specifier: string): boolean {
  const code = errorCode(error);
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false;
  return error instanceof Error && error.message.includes(`'${specifier}'`);
}

/**
 * Imports a package as the application would. Under pnpm a package sees only its own
 * dependencies, so a plain `import()` here would look in @ghost/core's dependencies, never in the
 * application's. The application's directory comes first; core's own location serves installs
 * where the two share a node_modules.
 */
async function importFromApplication(specifier: string): Promise<unknown> {
  const bases = [join(process.cwd(), 'package.json'), fileURLToPath(import.meta.url)];
  let firstMiss: unknown;
  for (const base of bases) {
    let resolved: string;
    try {
      resolved = createRequire(base).resolve(specifier);
    } catch (error) {
      if (errorCode(error) !== 'MODULE_NOT_FOUND') throw error;
      firstMiss ??= error;
      continue;
    }
    return import(pathToFileURL(resolved).href);
  }
  throw firstMiss;
}

function installCommand(specifier: string): string {
  // A subpath such as '@ghost/provider-openai/chat' is installed as its package.
  const parts = specifier.split('/');
  const packageName = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string);
  return `pnpm add ${packageName}`;
}

function checkModel(
  model: unknown,
  subject: string,
  details: Record<string, unknown> = {},
): asserts model is ModelV1 {
  const specificationVersion =
    typeof model === 'object' && model !== null
      ? (model as { specificationVersion?: unknown }).specificationVersion
      : undefined;
  if (specificationVersion !== 'model-v1') {
    throw new PluginVersionError(
      `${subject} implements specification '${String(specificationVersion)}', but this @ghost/core supports 'model-v1'. ${versionAdvice(String(specificationVersion), 'model-v1', undefined)}`,
      { details: { ...details, specificationVersion, supportedVersion: 'model-v1' } },
    );
  }
  if (typeof (model as { stream?: unknown }).stream !== 'function') {
    throw new PluginInvalidError(`${subject} has no stream() method.`, { details });
  }
}

function parseModelReference(reference: string): { providerName: string; modelId: string } {
  const colon = reference.indexOf(':');
  if (colon <= 0 || colon === reference.length - 1) {
    throw new ConfigurationError(
      `Model ${JSON.stringify(reference)} needs a provider and a model id separated by a colon, such as 'openai:gpt-5'.`,
      { code: 'MODEL_REFERENCE_INVALID', details: { reference } },
    );
  }
  return { providerName: reference.slice(0, colon), modelId: reference.slice(colon + 1) };
}

/**
 * The plugins a runtime can use: engines, sandbox backends and model providers, each kind with
 * its own names. Plugins registered explicitly win; other names fall back to the built-in
 * packages (`quickjs` → `@ghost/engine-quickjs`, ...), imported on first use, so installing a
 * package is enough and nothing heavy loads until it is needed.
 *
 * Sandbox `'native'` means `bwrap` on Linux and `seatbelt` on macOS; elsewhere it throws a
 * `SandboxUnavailableError` rather than fall back to anything weaker.
 *
 * @example
 * ```ts
 * const registry = new Registry();
 * registry.register(myEngine);
 * const engine = await registry.engine('quickjs'); // imports @ghost/engine-quickjs once
 * const model = await registry.model('openai:gpt-5');
 * ```
 */
export class Registry {
  readonly #plugins: { readonly [Kind in PluginKind]: Map<string, PluginsByKind[Kind]> } = {
    engine: new Map(),
    sandbox: new Map(),
    model: new Map(),
  };
  /** Models registered under a name of their own, such as `local` (see {@link Registry.registerModel}). */
  readonly #namedModels = new Map<string, ModelV1>();
  // Keyed by package, so concurrent first uses share one import; emptied once it settles.
  readonly #loading = new Map<string, Promise<Plugin>>();
  readonly #importModule: ImportModule;
  readonly #isImportInjected: boolean;

  constructor(options: RegistryOptions = {}) {
    if (options.importModule !== undefined && typeof options.importModule !== 'function') {
      throw new ConfigurationError('importModule must be a function (specifier) => Promise<module>.', {
        code: 'REGISTRY_OPTION_INVALID',
      });
    }
    this.#importModule = options.importModule ?? importFromApplication;
    this.#isImportInjected = options.importModule !== undefined;
  }

  /**
   * Adds a plugin. Throws a `ConfigurationError` when it is malformed, implements an unsupported
   * specification version, or has the name of a plugin of the same kind already registered.
   */
  register(plugin: Plugin): void {
    validatePlugin(plugin);
    if (plugin.kind === 'sandbox' && plugin.name === nativeSandboxName) {
      throw new PluginInvalidError(
        `Sandbox name '${nativeSandboxName}' is reserved: it always means bwrap on Linux and seatbelt on macOS. Give your backend another name.`,
        { details: { kind: plugin.kind, name: plugin.name } },
      );
    }
    const plugins = this.#plugins[plugin.kind] as Map<string, Plugin>;
    if (plugins.has(plugin.name)) {
      throw new PluginAlreadyRegisteredError(
        `${pluginLabel(plugin.kind, plugin.name)} is already registered: register each name once, or give this one another name.`,
        { details: { kind: plugin.kind, name: plugin.name } },
      );
    }
    plugins.set(plugin.name, plugin);
  }

  /**
   * Registers a model under a name of its own, so agents can say `model: 'local'`. The name follows
   * plugin names' rules (letters, digits, `.`, `_`, `-`; no colon). Throws a `ConfigurationError`
   * for a malformed model or a name already taken.
   *
   * @example
   * ```ts
   * registry.registerModel('local', createOpenAICompatible({ name: 'ollama', baseURL })('qwen2.5-coder'));
   * ```
   */
  registerModel(name: string, model: ModelV1): void {
    if (typeof name !== 'string' || !pluginNamePattern.test(name)) {
      throw new PluginInvalidError(
        `A model name must start with a letter or digit and hold only letters, digits, '.', '_' or '-' (no colon), got ${JSON.stringify(name)}.`,
        { details: { kind: 'model', name } },
      );
    }
    checkModel(model, `Model '${name}'`);
    if (this.#namedModels.has(name)) {
      throw new PluginAlreadyRegisteredError(
        `Model '${name}' is already registered: register each name once, or give this one another name.`,
        { details: { kind: 'model', name } },
      );
    }
    this.#namedModels.set(name, model);
  }

  /** The engine with this name, importing its built-in package on first use. */
  engine(name: string): Promise<EnginePlugin> {
    return this.#resolve('engine', name);
  }

  /**
   * The sandbox backend with this name, importing its built-in package on first use. `'native'`
   * is the platform's own backend and rejects with `SandboxUnavailableError` where there is none.
   * Finding a backend does not mean it works here: call its `detect()`.
   */
  sandbox(name: string): Promise<SandboxBackendV1> {
    return this.#resolve('sandbox', name);
  }

  /** The model provider with this name, importing its built-in package on first use. */
  modelProvider(name: string): Promise<ModelProviderV1> {
    return this.#resolve('model', name);
  }

  /**
   * The model a reference names: a name given to {@link Registry.registerModel} (`'local'`), or
   * `'provider:model'` (`'openai:gpt-5.1'`, `'anthropic:claude-sonnet-4-5'`): the provider before
   * the first colon, the model id after it.
   */
  async model(reference: string): Promise<ModelV1> {
    const named = typeof reference === 'string' ? this.#namedModels.get(reference) : undefined;
    if (named !== undefined) return named;
    if (typeof reference === 'string' && !reference.includes(':')) {
      const names = [...this.#namedModels.keys()];
      throw new ConfigurationError(
        `Model ${JSON.stringify(reference)} is not a registered model name (${names.length === 0 ? 'none are registered' : `registered: ${names.join(', ')}`}) and has no provider: write 'provider:model', such as 'openai:gpt-5'.`,
        { code: 'MODEL_REFERENCE_INVALID', details: { reference } },
      );
    }
    const { providerName, modelId } = parseModelReference(reference);
    const provider = await this.modelProvider(providerName);
    const model: unknown = provider.languageModel(modelId);
    checkModel(model, `Model provider '${providerName}' returned a model for '${modelId}' that`, {
      name: providerName,
      modelId,
    });
    return model as ModelV1;
  }

  async #resolve<Kind extends PluginKind>(kind: Kind, name: string): Promise<PluginsByKind[Kind]> {
    if (typeof name !== 'string' || name === '') {
      throw new ConfigurationError(`Expected the name of a ${kind} plugin, got ${JSON.stringify(name)}.`, {
        code: 'PLUGIN_NAME_INVALID',
      });
    }
    const plugins = this.#plugins[kind] as Map<string, PluginsByKind[Kind]>;
    const registered = plugins.get(name);
    if (registered !== undefined) return registered;
    const builtinName =
      kind === 'sandbox' && name === nativeSandboxName ? nativeSandboxFor(process.platform) : name;
    const registeredBuiltin = plugins.get(builtinName);
    if (registeredBuiltin !== undefined) return registeredBuiltin;
    const packageName = builtinPackages[kind].get(builtinName);
    if (packageName === undefined) throw this.#notFound(kind, name);
    return (await this.#load(kind, builtinName, packageName)) as PluginsByKind[Kind];
  }

  #load(kind: PluginKind, name: string, packageName: string): Promise<Plugin> {
    let loading = this.#loading.get(packageName);
    if (loading === undefined) {
      loading = this.#importPlugin(kind, name, packageName);
      this.#loading.set(packageName, loading);
      // On success the plugin is registered and found directly; on failure a later call retries.
      const forget = () => this.#loading.delete(packageName);
      loading.then(forget, forget);
    }
    return loading;
  }

  async #importPlugin(kind: PluginKind, name: string, packageName: string): Promise<Plugin> {
    let namespace: unknown;
    try {
      namespace = await this.#importModule(packageName);
    } catch (error) {
      if (PluginNotInstalledError.isInstance(error)) throw error;
      if (isMissingPackage(error, packageName)) throw this.#notInstalled(kind, name, packageName, error);
      throw new PluginLoadError(
        `${pluginLabel(kind, name)} could not be loaded from ${packageName}: ${String(error)}. Reinstall the package, or check that its dependencies are installed.`,
        { details: { kind, name, packageName }, cause: error },
      );
    }
    const hasDefault = typeof namespace === 'object' && namespace !== null && 'default' in namespace;
    if (!hasDefault) {
      throw new PluginInvalidError(
        `${packageName} has no default export: a Ghost plugin package exports its plugin, or a function returning it, as default.`,
        { details: { kind, name, packageName } },
      );
    }
    let plugin: unknown = (namespace as { default: unknown }).default;
    if (typeof plugin === 'function') {
      try {
        plugin = await (plugin as () => unknown)();
      } catch (error) {
        throw new PluginLoadError(
          `${pluginLabel(kind, name)} from ${packageName} failed to start: ${String(error)}`,
          {
            details: { kind, name, packageName },
            cause: error,
          },
        );
      }
    }
    validatePlugin(plugin, { kind, packageName });
    if (plugin.name !== name) {
      throw new PluginInvalidError(
        `${packageName} provides ${kindNouns[kind]} named '${plugin.name}', but Ghost loaded it for '${name}'. Install a matching release of ${packageName}.`,
        { details: { kind, name, providedName: plugin.name, packageName } },
      );
    }
    this.register(plugin);
    return plugin;
  }

  #notInstalled(
    kind: PluginKind,
    name: string,
    packageName: string,
    cause: unknown,
  ): PluginNotInstalledError {
    const where = this.#isImportInjected
      ? ''
      : ` Ghost looks for it from the current directory (${process.cwd()}); if it is installed elsewhere, start the process there or pass importModule: (specifier) => import(specifier).`;
    return new PluginNotInstalledError(
      `${pluginLabel(kind, name)} needs the package ${packageName}, which is not installed. Install it: ${installCommand(packageName)}.${where}`,
      { details: { kind, name, packageName }, cause },
    );
  }

  #notFound(kind: PluginKind, name: string): PluginNotFoundError {
    const registered = [...this.#plugins[kind].keys()];
    const builtin = [...builtinPackages[kind].keys()];
    if (kind === 'sandbox') builtin.push(nativeSandboxName);
    const list = (names: readonly string[]) =>
      names.length === 0 ? 'none' : names.map((each) => `'${each}'`).join(', ');
    return new PluginNotFoundError(
      `No ${kindLabels[kind].toLowerCase()} is named '${name}'. Registered: ${list(registered)}. Built in: ${list(builtin)}. Register it with createRuntime({ ${kind === 'model' ? 'models' : `${kind}s`}: [...] }) or use one of these names.`,
      { details: { kind, name, registered, builtin } },
    );
  }
}

function nativeSandboxFor(platform: NodeJS.Platform): string {
  if (platform === 'linux') return 'bwrap';
  if (platform === 'darwin') return 'seatbelt';
  throw new SandboxUnavailableError(
    `Sandbox 'native' is not supported on ${platform}: Ghost has native sandboxes only for Linux (bubblewrap) and macOS (seatbelt). Run on one of those; name sandbox 'unrestricted' explicitly only if you accept running programs with no containment.`,
    { details: { platform } },
  );
}
