import { GhostError, type GhostErrorInit, markErrorClass } from './ghost-error.js';

/** The codes `@ghost/core` gives a {@link ConfigurationError}. */
export type ConfigurationErrorCode =
  | 'CONFIGURATION_INVALID'
  | 'AGENT_CODE_MODE_INVALID'
  | 'AGENT_INPUT_INVALID'
  | 'AGENT_LIMIT_INVALID'
  | 'AGENT_MODEL_INVALID'
  | 'AGENT_NAME_INVALID'
  | 'AGENT_OPTION_INVALID'
  | 'RESUME_OPTION_INVALID'
  | 'AGENT_OUTPUT_INVALID'
  | 'AGENT_SUBAGENT_INVALID'
  | 'AGENT_TOOL_DUPLICATE'
  | 'AGENT_TOOL_INVALID'
  | 'MODEL_REFERENCE_INVALID'
  | 'OPTION_UNKNOWN'
  | 'PLUGIN_NAME_INVALID'
  | 'REGISTRY_OPTION_INVALID'
  | 'RUNTIME_CLOSED'
  | 'RUNTIME_OPTION_INVALID'
  | 'RUNTIME_OPTION_UNKNOWN'
  | 'SESSION_MESSAGE_INVALID'
  | 'SESSION_OPTION_INVALID'
  | 'TELEMETRY_INVALID'
  | 'TOOL_DESCRIPTION_MISSING'
  | 'TOOL_EXECUTE_MISSING'
  | 'TOOL_INPUT_SCHEMA_INVALID'
  | 'TOOL_NAME_INVALID'
  | 'TOOL_SCHEMA_INVALID'
  | 'TOOL_TIMEOUT_INVALID'
  | 'TOOL_NEEDS_APPROVAL_INVALID'
  | 'WORKSPACE_ROOT_MISSING';

/** The facts a {@link ConfigurationError} can carry; each is set only when it applies. */
export interface ConfigurationErrorFacts {
  /** The option (or spawn-spec field) that is wrong, such as `maxTurns`. */
  readonly option?: string;
  /** The options that exist, when `option` is not one of them. */
  readonly known?: readonly string[];
  /** The options that cannot be given together with `option`. */
  readonly conflicting?: readonly string[];
  /** The tool whose definition is wrong. */
  readonly tool?: string;
  /** The model reference that could not be read, such as `'openai'` without a model id. */
  readonly reference?: string;
  /** The file or directory that is wrong. */
  readonly path?: string;
  /** The model provider whose options are wrong. */
  readonly provider?: string;
  /** The model id that is wrong. */
  readonly modelId?: string;
}

/** What {@link ConfigurationError}'s constructor takes besides the message. */
export type ConfigurationErrorInit<Code extends string = ConfigurationErrorCode | (string & {})> =
  GhostErrorInit<Code> & ConfigurationErrorFacts;

/**
 * A definition or configuration is wrong: a tool name, a schema, an unknown option, a plugin.
 * Thrown at definition time, before any run starts. Packages give it their own codes (such as
 * `PROVIDER_OPTION_INVALID`), so its `code` is open beyond {@link ConfigurationErrorCode}.
 */
export class ConfigurationError extends GhostError {
  static {
    markErrorClass(ConfigurationError, 'ConfigurationError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: ConfigurationErrorCode | (string & {});
  /** The option (or spawn-spec field) that is wrong, such as `maxTurns`. */
  readonly option: string | undefined;
  /** The options that exist, when `option` is not one of them. */
  readonly known: readonly string[] | undefined;
  /** The options that cannot be given together with `option`. */
  readonly conflicting: readonly string[] | undefined;
  /** The tool whose definition is wrong. */
  readonly tool: string | undefined;
  /** The model reference that could not be read. */
  readonly reference: string | undefined;
  /** The file or directory that is wrong. */
  readonly path: string | undefined;
  /** The model provider whose options are wrong. */
  readonly provider: string | undefined;
  /** The model id that is wrong. */
  readonly modelId: string | undefined;

  constructor(message: string, init: ConfigurationErrorInit = {}) {
    super(message, { ...init, code: init.code ?? 'CONFIGURATION_INVALID' });
    this.option = init.option;
    this.known = init.known;
    this.conflicting = init.conflicting;
    this.tool = init.tool;
    this.reference = init.reference;
    this.path = init.path;
    this.provider = init.provider;
    this.modelId = init.modelId;
  }
}
