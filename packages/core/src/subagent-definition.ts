import type { Agent } from './agent.js';
import { ConfigurationError } from './errors.js';

/**
 * One kind of subagent an agent may start by itself (`defineAgent({ subagents: [...] })`): the
 * model spawns it with `spawn_subagent`, talks to it, and waits for its answers.
 *
 * @example
 * ```ts
 * const lead = defineAgent({
 *   name: 'lead',
 *   model,
 *   subagents: [{ agent: researcher, description: 'Finds and cites sources on one question.' }],
 * });
 * ```
 */
export interface SubagentDefinition {
  /** The agent that does the work, made by `defineAgent`. */
  readonly agent: Agent;
  /**
   * The name the model picks this subagent by in `spawn_subagent` (1 to 64 letters, digits,
   * `_`, `-` or `.`). Default: the agent's name.
   */
  readonly kind?: string;
  /** What the model reads about this kind: say what it is good at and what to send it. */
  readonly description: string;
  /**
   * Keep each subagent's conversation in the run's session (`ask(input, { session })`): a later
   * run of the parent in the same session that spawns the same `task_name` continues it. Needs
   * the runtime's `sessionStore` (a run without one fails at `ask` with a `ConfigurationError`);
   * a run without a session keeps nothing. Default false.
   */
  readonly persist?: boolean;
}

/** @internal A subagent definition checked by `defineAgent`. */
export interface CheckedSubagent {
  readonly agent: Agent;
  readonly kind: string;
  readonly description: string;
  readonly isPersisted: boolean;
}

/** The names of the subagent control tools the model gets; no tool of the agent may take one. */
export const subagentControlToolNames: ReadonlySet<string> = new Set([
  'spawn_subagent',
  'send_message_to_subagent',
  'interject_subagent',
  'wait_for_subagents',
  'list_subagents',
]);

const kindPattern = /^[A-Za-z0-9_.-]{1,64}$/;
const definitionKeys = new Set(['agent', 'kind', 'description', 'persist']);

function invalid(agentName: string, problem: string, option = 'subagents'): ConfigurationError {
  return new ConfigurationError(`Agent '${agentName}' ${problem}`, {
    code: 'AGENT_SUBAGENT_INVALID',
    option,
  });
}

/** @internal Checks `defineAgent`'s `subagents`; throws a `ConfigurationError` for mistakes. */
export function checkSubagents(agentName: string, subagents: unknown): ReadonlyMap<string, CheckedSubagent> {
  const byKind = new Map<string, CheckedSubagent>();
  if (subagents === undefined) return byKind;
  if (!Array.isArray(subagents)) {
    throw invalid(agentName, 'takes subagents as a list: [{ agent, description }].');
  }
  for (const [index, entry] of (subagents as unknown[]).entries()) {
    const where = `subagents[${index}]`;
    if (typeof entry !== 'object' || entry === null) {
      throw invalid(agentName, `has ${where} that is not an object { agent, description }.`, where);
    }
    for (const key of Object.keys(entry)) {
      if (!definitionKeys.has(key)) {
        throw invalid(
          agentName,
          `has ${where} with no option '${key}'. Known options: ${[...definitionKeys].join(', ')}.`,
          `${where}.${key}`,
        );
      }
    }
    const { agent, kind, description, persist } = entry as SubagentDefinition;
    if (agent?.kind !== 'agent' || typeof agent.name !== 'string') {
      throw invalid(agentName, `has ${where} whose agent was not made with defineAgent().`, `${where}.agent`);
    }
    const resolvedKind = kind ?? agent.name;
    if (typeof resolvedKind !== 'string' || !kindPattern.test(resolvedKind)) {
      throw invalid(
        agentName,
        `has ${where} whose kind ${JSON.stringify(resolvedKind)} is invalid: give a kind of 1 to 64 letters, digits, '_', '-' or '.'${kind === undefined ? " (the default is the agent's name)" : ''}.`,
        `${where}.kind`,
      );
    }
    if (typeof description !== 'string' || description.trim() === '') {
      throw invalid(
        agentName,
        `has ${where} without a description: tell the model what subagent '${resolvedKind}' is good at.`,
        `${where}.description`,
      );
    }
    if (persist !== undefined && typeof persist !== 'boolean') {
      throw invalid(agentName, `has ${where} whose persist is not true or false.`, `${where}.persist`);
    }
    if (byKind.has(resolvedKind)) {
      throw invalid(
        agentName,
        `has two subagents of kind '${resolvedKind}'; give each a distinct kind.`,
        `${where}.kind`,
      );
    }
    byKind.set(resolvedKind, {
      agent,
      kind: resolvedKind,
      description,
      isPersisted: persist === true,
    });
  }
  return byKind;
}
