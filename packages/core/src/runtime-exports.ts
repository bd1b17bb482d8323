export {
  defineEngine,
  defineModelProvider,
  type EnginePlugin,
  type ImportModule,
  type ModelProviderV1,
  type Plugin,
  PluginAlreadyRegisteredError,
  PluginInvalidError,
  type PluginKind,
  PluginLoadError,
  PluginNotFoundError,
  PluginNotInstalledError,
  PluginVersionError,
  Registry,
  type RegistryOptions,
} from './registry.js';
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
export { Workspace, WorkspaceClosedError, type WorkspaceOptions } from './workspace.js';
