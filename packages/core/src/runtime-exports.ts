export { builtinContractAdapters, type ContractAdapter } from './contract-adapter.js';
export { defineModelProvider } from './define-model-provider.js';
export type { EnginePlugin, ModelProviderV1, Plugin, PluginKind } from './plugin.js';
export {
  PluginAlreadyRegisteredError,
  PluginInvalidError,
  PluginLoadError,
  PluginNotFoundError,
  PluginNotInstalledError,
  PluginVersionError,
} from './plugin-errors.js';
export { type ImportModule, Registry, type RegistryOptions } from './registry.js';
export {
  configure,
  createRuntime,
  defaultRuntime,
  type Runtime,
  type RuntimeOptions,
  type RuntimeResource,
} from './runtime.js';
export {
  type BoundedOutput,
  defineSandboxBackend,
  type SandboxBackendV1,
  type SandboxCapabilities,
  type SandboxCheck,
  type SandboxDetection,
  type SandboxExit,
  type SandboxLimits,
  type SandboxNetwork,
  type SandboxProcess,
  type SandboxSpawnSpec,
} from './sandbox.js';
export { currentSpecificationVersions } from './specification-version.js';
export { Workspace, WorkspaceClosedError, type WorkspaceOptions } from './workspace.js';
