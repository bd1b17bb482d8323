import { checkModel } from './check-model.js';
import { ConfigurationError, SandboxUnavailableError } from './errors.js';
import { importFromApplication, installCommand, isMissingPackage } from './import-from-application.js';
import type { ModelV1 } from './model.js';
import {
  type EnginePlugin,
  kindLabel,
  kindNoun,
  kindOption,
  type ModelProviderV1,
  type Plugin,
  type PluginKind,
  type PluginsByKind,
  pluginLabel,
  pluginNamePattern,
} from './plugin.js';
import {
  PluginAlreadyRegisteredError,
  PluginInvalidError,
  PluginLoadError,
  PluginNotFoundError,
  PluginNotInstalledError,
} from './plugin-errors.js';
import type { SandboxBackendV1 } from './sandbox.js';
import type { SessionStoreV1 } from './session-store.js';
import { validatePlugin } from './validate-plugin.js';

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

// Maps rather than object literals, so a name like 'constructor' cannot find Object.prototype.
const builtinPackages: { readonly [Kind in PluginKind]: ReadonlyMap<string, string> } = {
  engine: new Map([
    ['quickjs', '@ghost/engine-quickjs'],
    ['v8', '@ghost/engine-v8'],
    ['python', '@ghost/engine-python'],
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
  // A store needs its own settings (a file, a connection), so none is found by name alone.
  'session-store': new Map(),
};

const nativeSandboxName = 'native';

function parseModelReference(reference: string): { providerName: string; modelId: string } {
  const colon = reference.indexOf(':');
  if (colon <= 0 || colon === reference.length - 1) {
    throw new ConfigurationError(
      `Model ${JSON.stringify(reference)} needs a provider and a model id separated by a colon, such as 'openai:gpt-5'.`,
      { code: 'MODEL_REFERENCE_INVALID', reference },
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
    'session-store': new Map(),
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
    this.#add(this.#checked(plugin));
  }

  /**
   * The plugin, checked: well formed, and of exactly the specification version this core
   * implements (any other is refused with a `PluginVersionError` naming the expected version).
   */
  #checked(value: unknown, origin: { kind?: PluginKind; packageName?: string } = {}): Plugin {
    validatePlugin(value, origin);
    return value;
  }

  #add(plugin: Plugin): void {
    if (plugin.kind === 'sandbox' && plugin.name === nativeSandboxName) {
      throw new PluginInvalidError(
        `Sandbox name '${nativeSandboxName}' is reserved: it always means bwrap on Linux and seatbelt on macOS. Give your backend another name.`,
        { kind: plugin.kind, pluginName: plugin.name },
      );
    }
    const plugins = this.#plugins[plugin.kind] as Map<string, Plugin>;
    if (plugins.has(plugin.name)) {
      throw new PluginAlreadyRegisteredError(
        `${pluginLabel(plugin.kind, plugin.name)} is already registered: register each name once, or give this one another name.`,
        { kind: plugin.kind, pluginName: plugin.name },
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
        { kind: 'model', pluginName: name },
      );
    }
    checkModel(model, `Model '${name}'`);
    if (this.#namedModels.has(name)) {
      throw new PluginAlreadyRegisteredError(
        `Model '${name}' is already registered: register each name once, or give this one another name.`,
        { kind: 'model', pluginName: name },
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

  /** The session store registered with this name (`undefined` when none is). */
  sessionStore(name: string): SessionStoreV1 | undefined {
    return this.#plugins['session-store'].get(name);
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
        { code: 'MODEL_REFERENCE_INVALID', reference },
      );
    }
    const { providerName, modelId } = parseModelReference(reference);
    const provider = await this.modelProvider(providerName);
    const model: unknown = provider.languageModel(modelId);
    checkModel(model, `Model provider '${providerName}' returned a model for '${modelId}' that`, {
      kind: 'model',
      pluginName: providerName,
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
        { kind, pluginName: name, packageName, cause: error },
      );
    }
    const hasDefault = typeof namespace === 'object' && namespace !== null && 'default' in namespace;
    if (!hasDefault) {
      throw new PluginInvalidError(
        `${packageName} has no default export: a Ghost plugin package exports its plugin, or a function returning it, as default.`,
        { kind, pluginName: name, packageName },
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
            kind,
            pluginName: name,
            packageName,
            cause: error,
          },
        );
      }
    }
    const adapted = this.#checked(plugin, { kind, packageName });
    if (adapted.name !== name) {
      throw new PluginInvalidError(
        `${packageName} provides ${kindNoun(kind)} named '${adapted.name}', but Ghost loaded it for '${name}'. Install a matching release of ${packageName}.`,
        { kind, pluginName: name, providedName: adapted.name, packageName },
      );
    }
    this.#add(adapted);
    return adapted;
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
      { kind, pluginName: name, packageName, cause },
    );
  }

  #notFound(kind: PluginKind, name: string): PluginNotFoundError {
    const registered = [...this.#plugins[kind].keys()];
    const builtin = [...builtinPackages[kind].keys()];
    if (kind === 'sandbox') builtin.push(nativeSandboxName);
    const list = (names: readonly string[]) =>
      names.length === 0 ? 'none' : names.map((each) => `'${each}'`).join(', ');
    return new PluginNotFoundError(
      `No ${kindLabel(kind).toLowerCase()} is named '${name}'. Registered: ${list(registered)}. Built in: ${list(builtin)}. Register it with createRuntime({ ${kindOption(kind)} }) or use one of these names.`,
      { kind, pluginName: name, registered, builtin },
    );
  }
}

function nativeSandboxFor(platform: NodeJS.Platform): string {
  if (platform === 'linux') return 'bwrap';
  if (platform === 'darwin') return 'seatbelt';
  throw new SandboxUnavailableError(
    `Sandbox 'native' is not supported on ${platform}: Ghost has native sandboxes only for Linux (bubblewrap) and macOS (seatbelt). Run on one of those; name sandbox 'unrestricted' explicitly only if you accept running programs with no containment.`,
    { platform },
  );
}
