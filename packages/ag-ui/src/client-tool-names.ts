import type { RunAgentInput } from '@ag-ui/core';
import type { AgUiServedAgent } from './ag-ui-handler.js';

/** Code mode's control tools: the agent's whenever it runs in code mode, never a client's. */
const codeModeControlNames: readonly string[] = ['exec', 'wait', 'stop'];

/**
 * The tools a request's client owns: those it declares that cannot be the agent's. The agent's
 * plain tools and code mode's controls are its own; an agent with tool sources, whose names are
 * known only once a run starts, or one that does not expose its tools, may own any name, so then
 * the client owns none.
 */
export function clientToolNamesOf(input: RunAgentInput, agent: AgUiServedAgent): string[] {
  if (agent.tools === undefined || agent.toolSources === undefined || agent.toolSources.length > 0) return [];
  const agentNames = new Set([...agent.tools.map((tool) => tool.name), ...codeModeControlNames]);
  return input.tools.map((tool) => tool.name).filter((name) => !agentNames.has(name));
}
