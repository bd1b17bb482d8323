import { ConfigurationError } from './configuration-error.js';
import { type GhostErrorInit, markErrorClass } from './ghost-error.js';

/** The codes of the plugin errors. */
export type PluginErrorCode =
  | 'PLUGIN_INVALID'
  | 'PLUGIN_VERSION_UNSUPPORTED'
  | 'PLUGIN_ALREADY_REGISTERED'
  | 'PLUGIN_NOT_FOUND'
  | 'PLUGIN_NOT_INSTALLED'
  | 'PLUGIN_LOAD_FAILED';

/** What every plugin error can say about the plugin at fault; each fact is set only when known. */
export interface PluginErrorFacts {
  /** The plugin's kind, as the plugin declared it (so possibly not a valid kind). */
  readonly kind?: unknown;
  /** The plugin's name, as the plugin declared it. */
  readonly pluginName?: unknown;
  /** The package the plugin came from, for a built-in plugin. */
  readonly packageName?: string | undefined;
  /** The model id asked of a model provider, when the model it returned is at fault. */
  readonly modelId?: string;
}

/** What a plugin error's constructor takes besides the message. */
export type PluginErrorInit<Code extends PluginErrorCode> = Omit<GhostErrorInit<Code>, 'code'> &
  PluginErrorFacts;

/** A plugin object is malformed: a missing name or method, an unknown kind, the wrong kind of plugin. */
export class PluginInvalidError extends ConfigurationError {
  static {
    markErrorClass(PluginInvalidError, 'PluginInvalidError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'PLUGIN_INVALID';
  /** The plugin's kind, as the plugin declared it. */
  readonly kind: unknown;
  /** The plugin's name, as the plugin declared it. */
  readonly pluginName: unknown;
  /** The package the plugin came from, for a built-in plugin. */
  readonly packageName: string | undefined;
  /** The kind the plugin should have had, when it had another. */
  readonly expectedKind: string | undefined;
  /** The method the plugin lacks. */
  readonly method: string | undefined;
  /** The name a built-in plugin's package gave it, when it is not the name asked for. */
  readonly providedName: string | undefined;

  constructor(
    message: string,
    init: PluginErrorInit<'PLUGIN_INVALID'> & {
      readonly expectedKind?: string;
      readonly method?: string;
      readonly providedName?: string;
    } = {},
  ) {
    super(message, { ...init, code: 'PLUGIN_INVALID' });
    this.kind = init.kind;
    this.pluginName = init.pluginName;
    this.packageName = init.packageName;
    this.expectedKind = init.expectedKind;
    this.method = init.method;
    this.providedName = init.providedName;
  }
}

/** A plugin implements a specification version this `@ghost/core` does not support. The message says what to upgrade. */
export class PluginVersionError extends ConfigurationError {
  static {
    markErrorClass(PluginVersionError, 'PluginVersionError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'PLUGIN_VERSION_UNSUPPORTED';
  /** The plugin's kind. */
  readonly kind: unknown;
  /** The plugin's name. */
  readonly pluginName: unknown;
  /** The package the plugin came from, for a built-in plugin. */
  readonly packageName: string | undefined;
  /** The specification version the plugin implements, as it declared it. */
  readonly specificationVersion: unknown;
  /** The specification version this `@ghost/core` supports for that kind. */
  readonly supportedVersion: string | undefined;

  constructor(
    message: string,
    init: PluginErrorInit<'PLUGIN_VERSION_UNSUPPORTED'> & {
      readonly specificationVersion?: unknown;
      readonly supportedVersion?: string;
    } = {},
  ) {
    super(message, { ...init, code: 'PLUGIN_VERSION_UNSUPPORTED' });
    this.kind = init.kind;
    this.pluginName = init.pluginName;
    this.packageName = init.packageName;
    this.specificationVersion = init.specificationVersion;
    this.supportedVersion = init.supportedVersion;
  }
}

/** A plugin of the same kind and name is already registered. */
export class PluginAlreadyRegisteredError extends ConfigurationError {
  static {
    markErrorClass(PluginAlreadyRegisteredError, 'PluginAlreadyRegisteredError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'PLUGIN_ALREADY_REGISTERED';
  /** The plugin's kind. */
  readonly kind: unknown;
  /** The name already taken. */
  readonly pluginName: unknown;

  constructor(message: string, init: PluginErrorInit<'PLUGIN_ALREADY_REGISTERED'> = {}) {
    super(message, { ...init, code: 'PLUGIN_ALREADY_REGISTERED' });
    this.kind = init.kind;
    this.pluginName = init.pluginName;
  }
}

/** No plugin of that kind and name is registered, and none is built in. The message lists those that are. */
export class PluginNotFoundError extends ConfigurationError {
  static {
    markErrorClass(PluginNotFoundError, 'PluginNotFoundError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'PLUGIN_NOT_FOUND';
  /** The kind asked for. */
  readonly kind: unknown;
  /** The name asked for. */
  readonly pluginName: unknown;
  /** The names registered for that kind. */
  readonly registered: readonly string[] | undefined;
  /** The names built in for that kind. */
  readonly builtin: readonly string[] | undefined;

  constructor(
    message: string,
    init: PluginErrorInit<'PLUGIN_NOT_FOUND'> & {
      readonly registered?: readonly string[];
      readonly builtin?: readonly string[];
    } = {},
  ) {
    super(message, { ...init, code: 'PLUGIN_NOT_FOUND' });
    this.kind = init.kind;
    this.pluginName = init.pluginName;
    this.registered = init.registered;
    this.builtin = init.builtin;
  }
}

/** A built-in plugin's package is not installed. The message names the package to install. */
export class PluginNotInstalledError extends ConfigurationError {
  static {
    markErrorClass(PluginNotInstalledError, 'PluginNotInstalledError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'PLUGIN_NOT_INSTALLED';
  /** The plugin's kind. */
  readonly kind: unknown;
  /** The plugin's name. */
  readonly pluginName: unknown;
  /** The package to install. */
  readonly packageName: string | undefined;

  constructor(message: string, init: PluginErrorInit<'PLUGIN_NOT_INSTALLED'> = {}) {
    super(message, { ...init, code: 'PLUGIN_NOT_INSTALLED' });
    this.kind = init.kind;
    this.pluginName = init.pluginName;
    this.packageName = init.packageName;
  }
}

/** A built-in plugin's package is installed but failed to load: it threw while importing or while making its plugin. */
export class PluginLoadError extends ConfigurationError {
  static {
    markErrorClass(PluginLoadError, 'PluginLoadError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'PLUGIN_LOAD_FAILED';
  /** The plugin's kind. */
  readonly kind: unknown;
  /** The plugin's name. */
  readonly pluginName: unknown;
  /** The package that failed to load. */
  readonly packageName: string | undefined;

  constructor(message: string, init: PluginErrorInit<'PLUGIN_LOAD_FAILED'> = {}) {
    super(message, { ...init, code: 'PLUGIN_LOAD_FAILED' });
    this.kind = init.kind;
    this.pluginName = init.pluginName;
    this.packageName = init.packageName;
  }
}
