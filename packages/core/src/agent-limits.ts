import type { AgentLimits } from './agent-loop.js';
import { ConfigurationError } from './errors.js';
import { defaultModelStreamLimits } from './model.js';
import { rejectUnknownKeys } from './reject-unknown-keys.js';

/** The default limits of every agent. */
export const defaultAgentLimits: AgentLimits = Object.freeze({
  maxTurns: 100,
  maxToolCalls: 1_000,
  maxParallelToolCalls: 8,
  maxDepth: 8,
  maxLiveSubagents: 8,
  maxSubagents: 20,
  maxQueuedSubagentMessages: 8,
  subagentWaitMs: 30_000,
  approvalTimeoutMs: 600_000,
  ...defaultModelStreamLimits,
});

/** An agent's limits over the defaults, checked: each a whole number of at least 1. */
export function resolveLimits(agentName: string, limits: Partial<AgentLimits> = {}): AgentLimits {
  rejectUnknownKeys(limits, new Set(Object.keys(defaultAgentLimits)), `Agent '${agentName}' limits`);
  const resolved = { ...defaultAgentLimits, ...limits };
  for (const [key, value] of Object.entries(resolved)) {
    if (!Number.isInteger(value) || value < 1) {
      throw new ConfigurationError(
        `Agent '${agentName}' has limits.${key} = ${value}; use a whole number of at least 1.`,
        {
          code: 'AGENT_LIMIT_INVALID',
        },
      );
    }
  }
  return Object.freeze(resolved);
}
