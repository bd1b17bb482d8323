import type { TSchema } from 'typebox';
import type { AgentDefinition } from './agent.js';
import type { AgentCodeMode, PreparedAgentCodeMode } from './agent-code-mode.js';
import { resolveLimits } from './agent-limits.js';
import type { AgentLimits } from './agent-loop.js';
import { ConfigurationError } from './errors.js';
import type { ModelSettings, ModelV1, ProviderOptions } from './model.js';
import { rejectUnknownKeys } from './reject-unknown-keys.js';
import { prepareStructuredOutput, type StructuredOutput } from './structured-output.js';
import { type CheckedSubagent, checkSubagents, subagentControlToolNames } from './subagent-definition.js';
import { checkTelemetry, type TelemetryV1 } from './telemetry.js';
import type { Tool } from './tool.js';
import { isToolSource, type ToolSource } from './tool-source.js';

/** An agent's definition once checked: what every invocation and every run of the agent reads. */
export interface CheckedAgentDefinition {
  readonly name: string;
  readonly instructions: string;
  readonly model: ModelV1 | string;
  readonly limits: AgentLimits;
  readonly toolsByName: ReadonlyMap<string, Tool>;
  readonly toolSources: readonly ToolSource[];
  readonly codeMode: PreparedAgentCodeMode | undefined;
  readonly output: StructuredOutput | undefined;
  readonly settings: ModelSettings | undefined;
  readonly providerOptions: ProviderOptions | undefined;
  readonly telemetry: readonly TelemetryV1[];
  readonly subagents: ReadonlyMap<string, CheckedSubagent>;
  readonly hasPersistedSubagents: boolean;
}

const definitionKeys = new Set([
  'name',
  'instructions',
  'model',
  'tools',
  'limits',
  'codeMode',
  'output',
  'modelSettings',
  'providerOptions',
  'telemetry',
  'subagents',
]);

/** Checks an agent's definition, throwing a `ConfigurationError` for its first mistake. */
export function checkAgentDefinition(
  definition: AgentDefinition<TSchema | undefined>,
): CheckedAgentDefinition {
  const { name } = definition;
  if (typeof name !== 'string' || name.trim() === '') {
    throw new ConfigurationError('An agent needs a non-empty name.', { code: 'AGENT_NAME_INVALID' });
  }
  rejectUnknownKeys(definition, definitionKeys, `Agent '${name}'`);
  if (typeof definition.model !== 'string' && !isModel(definition.model)) {
    throw new ConfigurationError(
      `Agent '${name}' needs a model: a ModelV1 object (specificationVersion 'model-v1') or a 'provider:model' id.`,
      { code: 'AGENT_MODEL_INVALID' },
    );
  }
  const instructions = definition.instructions ?? 'You are a helpful agent.';
  const limits = resolveLimits(name, definition.limits);
  const { byName: toolsByName, sources: toolSources } = resolveTools(name, definition.tools);
  const codeMode = prepareCodeMode(
    name,
    definition.codeMode,
    [...toolsByName.values()],
    toolSources.length > 0,
  );
  const output =
    definition.output === undefined ? undefined : prepareStructuredOutput(name, definition.output);
  const settings = checkRecord(name, 'modelSettings', definition.modelSettings);
  const providerOptions = checkRecord(name, 'providerOptions', definition.providerOptions);
  const telemetry = checkTelemetry(definition.telemetry, `Agent '${name}'`);
  const subagents = checkSubagents(name, definition.subagents);
  if (subagents.size > 0) rejectSubagentControlToolNames(name, toolsByName);
  return {
    name,
    instructions,
    model: definition.model,
    limits,
    toolsByName,
    toolSources,
    codeMode,
    output,
    settings,
    providerOptions,
    telemetry,
    subagents,
    hasPersistedSubagents: [...subagents.values()].some((subagent) => subagent.isPersisted),
  };
}

/** `modelSettings` or `providerOptions`, of a definition or of one ask, checked to be an object. */
export function checkRecord<Value extends object>(
  agentName: string,
  option: 'modelSettings' | 'providerOptions',
  value: Value | undefined,
): Value | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigurationError(`Agent '${agentName}' ${option} must be an object.`, {
      code: 'AGENT_OPTION_INVALID',
      option,
    });
  }
  return value;
}

function isModel(value: unknown): value is ModelV1 {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as ModelV1).specificationVersion === 'model-v1' &&
    typeof (value as ModelV1).stream === 'function'
  );
}

function resolveTools(
  agentName: string,
  tools: readonly (Tool | ToolSource)[] = [],
): { byName: ReadonlyMap<string, Tool>; sources: readonly ToolSource[] } {
  const byName = new Map<string, Tool>();
  const sources: ToolSource[] = [];
  for (const tool of tools) {
    if (isToolSource(tool)) {
      sources.push(tool);
      continue;
    }
    if (tool?.kind !== 'tool') {
      throw new ConfigurationError(
        `Agent '${agentName}' has a tool that was not made with defineTool() and is not a tool source.`,
        { code: 'AGENT_TOOL_INVALID' },
      );
    }
    if (byName.has(tool.name)) {
      throw new ConfigurationError(
        `Agent '${agentName}' has two tools named '${tool.name}'; tool names must be unique.`,
        {
          code: 'AGENT_TOOL_DUPLICATE',
        },
      );
    }
    byName.set(tool.name, tool);
  }
  return { byName, sources };
}

function prepareCodeMode(
  agentName: string,
  codeMode: AgentCodeMode | undefined,
  tools: readonly Tool[],
  hasToolSources: boolean,
): PreparedAgentCodeMode | undefined {
  if (codeMode === undefined) return undefined;
  if (codeMode?.kind !== 'code-mode' || typeof codeMode.prepare !== 'function') {
    throw new ConfigurationError(
      `Agent '${agentName}' has a codeMode that was not made with codeMode() from @ghost/code-mode.`,
      { code: 'AGENT_CODE_MODE_INVALID' },
    );
  }
  return codeMode.prepare({ agentName, tools, hasToolSources });
}

/** An agent with subagents gets their control tools, so none of its own tools may take their names. */
function rejectSubagentControlToolNames(agentName: string, toolsByName: ReadonlyMap<string, Tool>): void {
  for (const toolName of toolsByName.keys()) {
    if (subagentControlToolNames.has(toolName)) {
      throw new ConfigurationError(
        `Agent '${agentName}' has a tool named '${toolName}', the name of a subagent control tool; rename the tool.`,
        { code: 'AGENT_TOOL_DUPLICATE' },
      );
    }
  }
}
