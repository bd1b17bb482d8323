import { ConfigurationError, type GhostErrorOptions } from './errors.js';

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
