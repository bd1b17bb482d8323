import {
  type Agent,
  ConfigurationError,
  defineTool,
  type Tool,
  type ToolDefinition,
  ToolError,
} from '@ghost/core';
import type { AssemblyExecution } from '@ghost/core/assembly';
import {
  type Assembly,
  type AssemblyScope,
  assemblyEntry,
  isAgent,
  registerAssembly,
  runStep,
  type StepResult,
  wholeNumberAtLeast,
} from './assembly.js';
import { AssemblyLimitError, AssemblyRoutingError } from './assembly-errors.js';

/** How one member of a swarm runs each of its turns (see {@link SwarmDefinition.memberOptions}). */
export interface SwarmMemberOptions {
  /** How long one turn of the member may take before it is stopped (`AssemblyStepTimeoutError`). */
  readonly timeoutMs?: number;
  /** How many times a failed turn is run again. Default 0. */
  readonly retries?: number;
  /** How long to wait before each retry. Default 0. */
  readonly retryDelayMs?: number;
}

/** The options of {@link defineSwarm}. */
export interface SwarmDefinition {
  /** A name for logs and events. */
  readonly name: string;
  /** The agents of the swarm, each known by its `name` (names must differ). */
  readonly members: readonly Agent[];
  /** The name of the member that answers first. */
  readonly start: string;
  /**
   * Who may hand the conversation to whom: `{ triage: ['billing'] }` gives `triage` a
   * `transfer_to_billing` tool. A member without an entry cannot hand off: it must answer.
   */
  readonly handoffs: Readonly<Record<string, readonly string[]>>;
  /** The most member turns in one run; one more fails it with `AssemblyLimitError`. Default 20. */
  readonly maxSteps?: number;
  /**
   * How many times the same member may hand off to the same other member in one run; one more
   * emits `assembly_handoff_loop` and fails the run with `AssemblyLimitError`. Default 3.
   */
  readonly maxHandoffRepeats?: number;
  /** Timeout and retries per member, by member name. */
  readonly memberOptions?: Readonly<Record<string, SwarmMemberOptions>>;
}

/** A swarm made by {@link defineSwarm}. */
export interface Swarm extends Assembly {
  /** Always `'swarm'`. */
  readonly kind: 'swarm';
}

/** What a transfer tool takes: why, and a note for the member that takes over. */
export interface SwarmHandoffInput {
  /** Why the member hands the conversation over (the next member reads it). */
  readonly reason?: string;
  /** A note for the next member: what the user needs and what is known so far. */
  readonly message?: string;
}

const definitionKeys: ReadonlySet<string> = new Set([
  'name',
  'members',
  'start',
  'handoffs',
  'maxSteps',
  'maxHandoffRepeats',
  'memberOptions',
]);
const memberOptionKeys: ReadonlySet<string> = new Set(['timeoutMs', 'retries', 'retryDelayMs']);
const defaultMaxSteps = 20;
const defaultMaxHandoffRepeats = 3;
const maxNoteChars = 8_000;

// Written out as the JSON Schema typebox would make, so this package needs no typebox.
const transferInput = Object.freeze({
  type: 'object',
  properties: {
    reason: { type: 'string', maxLength: maxNoteChars, description: 'Why the conversation is handed over.' },
    message: {
      type: 'string',
      maxLength: maxNoteChars,
      description: 'A note for the member that takes over: what the user needs and what is known so far.',
    },
  },
}) as unknown as ToolDefinition['input'];

/** The model-facing name of the tool that hands the conversation to `member`. */
function transferToolName(member: string): string {
  return `transfer_to_${member.replace(/[^A-Za-z0-9_-]/g, '_')}`.slice(0, 64);
}

/**
 * Defines a swarm: agents that pass the conversation to one another. Each member gets a
 * `transfer_to_<member>` tool for every member it may hand off to; when it calls one, the
 * conversation so far goes to that member. The swarm ends with the answer of the first member
 * that answers without handing off.
 *
 * A handoff ends the member's turn through the model, not by stopping it: the transfer tool
 * records the handoff and tells the model the conversation is handed over and to end its turn,
 * and the member's agent loop ends, as always, when the model answers without calling a tool.
 * (Stopping the agent would make its step fail and retry.) The member's agent `limits.maxTurns`
 * bounds a model that keeps going; a second transfer to another member in the same turn is
 * refused, the first one stands.
 *
 * The next member runs with the original input and every earlier member's answer as its
 * history, then the handoff (who handed over, the reason and the message) as its input.
 *
 * @example
 * ```ts
 * const support = defineSwarm({
 *   name: 'support',
 *   members: [triage, billing],
 *   start: 'triage',
 *   handoffs: { triage: ['billing'], billing: ['triage'] },
 *   memberOptions: { billing: { timeoutMs: 60_000, retries: 1 } },
 * });
 * const run = await support.ask('I was charged twice.');
 * ```
 */
export function defineSwarm(definition: SwarmDefinition): Swarm {
  const plan = checkDefinition(definition);
  const perform = (scope: AssemblyScope, input: string): Promise<StepResult> => runSwarm(plan, scope, input);
  const swarm: Swarm = Object.freeze(assemblyEntry('swarm', plan.name, perform));
  registerAssembly(swarm, perform);
  return swarm;
}

interface SwarmPlan {
  readonly name: string;
  readonly members: ReadonlyMap<string, Agent>;
  readonly start: string;
  readonly handoffs: ReadonlyMap<string, readonly string[]>;
  readonly maxSteps: number;
  readonly maxHandoffRepeats: number;
  readonly memberOptions: ReadonlyMap<string, SwarmMemberOptions>;
}

interface Handoff {
  readonly to: string;
  readonly reason: string | undefined;
  readonly message: string | undefined;
}

/** The handoff one attempt of a member's turn asked for, if any. */
class HandoffRecord {
  handoff: Handoff | undefined;
}

type Message = { readonly role: 'user' | 'assistant'; readonly content: string };

async function runSwarm(plan: SwarmPlan, scope: AssemblyScope, input: string): Promise<StepResult> {
  const { execution } = scope;
  const history: Message[] = [];
  const repeats = new Map<string, number>();
  let current = plan.start;
  let stepInput = input;
  for (let turn = 1; ; turn += 1) {
    const member = plan.members.get(current);
    if (member === undefined) {
      // Unreachable through the tools (each names a checked member); kept as the run-time guard.
      throw new AssemblyRoutingError(`Swarm '${plan.name}' has no member '${current}' to hand off to.`);
    }
    const record = new HandoffRecord();
    const options = plan.memberOptions.get(current);
    const result = await runStep(memberScope(scope, record), {
      step: current,
      runnable: member,
      input: stepInput,
      history: [...history],
      tools: transferTools(plan.handoffs.get(current) ?? [], record),
      ...(options?.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options?.retries !== undefined ? { retries: options.retries } : {}),
      ...(options?.retryDelayMs !== undefined ? { retryDelayMs: options.retryDelayMs } : {}),
    });
    const { handoff } = record;
    if (handoff === undefined) return result;
    const from = current;
    const { to } = handoff;
    if (!plan.members.has(to)) {
      throw new AssemblyRoutingError(
        `Member '${from}' of swarm '${plan.name}' handed off to '${to}', which is not a member.`,
      );
    }
    const pair = `${from}\u0000${to}`;
    const count = (repeats.get(pair) ?? 0) + 1;
    repeats.set(pair, count);
    if (count > plan.maxHandoffRepeats) {
      execution.emit('assembly_handoff_loop', {
        assemblyName: plan.name,
        from,
        to,
        repeats: count,
        maxHandoffRepeats: plan.maxHandoffRepeats,
      });
      throw new AssemblyLimitError(
        `Swarm '${plan.name}': '${from}' handed off to '${to}' ${count} times, more than maxHandoffRepeats (${plan.maxHandoffRepeats}); the members are passing the conversation back and forth.`,
        { limit: 'maxHandoffRepeats', value: plan.maxHandoffRepeats },
      );
    }
    if (turn >= plan.maxSteps) {
      throw new AssemblyLimitError(
        `Swarm '${plan.name}' used all ${plan.maxSteps} member turns (maxSteps) without a final answer; '${from}' handed off to '${to}'.`,
        { limit: 'maxSteps', value: plan.maxSteps },
      );
    }
    execution.emit('assembly_transition', { assemblyName: plan.name, from, to, kind: 'handoff' });
    history.push({ role: 'user', content: stepInput });
    // Never an empty assistant message: some providers refuse one.
    history.push({
      role: 'assistant',
      content: result.response.trim() === '' ? `(${from} handed off to ${to}.)` : result.response,
    });
    stepInput = handoffNote(from, handoff);
    current = to;
  }
}

/**
 * The member's scope: the same run, except that each attempt of its turn (a retry starts its
 * agent again) forgets the handoff an earlier, failed attempt asked for.
 */
function memberScope(scope: AssemblyScope, record: HandoffRecord): AssemblyScope {
  const { execution } = scope;
  const memberExecution: AssemblyExecution = {
    assemblyName: execution.assemblyName,
    runContext: execution.runContext,
    signal: execution.signal,
    emit: (type, data) => execution.emit(type, data),
    inStep: (stepId, work) => execution.inStep(stepId, work),
    runAgent: (agent, agentInput, options) => {
      record.handoff = undefined;
      return execution.runAgent(agent, agentInput, options);
    },
  };
  return { ...scope, execution: memberExecution };
}

function transferTools(targets: readonly string[], record: HandoffRecord): Tool[] {
  return targets.map((to) =>
    defineTool({
      name: transferToolName(to),
      description: `Hands the conversation to '${to}', who continues it with the user. Call it when '${to}' should take over, then end your turn.`,
      input: transferInput,
      execute: (value) => {
        const { reason, message } = value as SwarmHandoffInput;
        const earlier = record.handoff;
        if (earlier !== undefined && earlier.to !== to) {
          throw new ToolError(
            `The conversation is already handed over to '${earlier.to}'. End your turn now without calling more tools.`,
          );
        }
        record.handoff ??= { to, reason, message };
        return {
          handed_off_to: to,
          note: `The conversation is handed over to '${to}'. End your turn now: reply with at most a short sentence for the user, and call no more tools.`,
        };
      },
    }),
  );
}

/** The next member's input: who handed over, why, and their note. */
function handoffNote(from: string, handoff: Handoff): string {
  const lines = [`'${from}' handed the conversation over to you ('${handoff.to}').`];
  if (handoff.reason !== undefined && handoff.reason.trim() !== '') lines.push(`Reason: ${handoff.reason}`);
  if (handoff.message !== undefined && handoff.message.trim() !== '')
    lines.push(`Message: ${handoff.message}`);
  lines.push('Continue the conversation with the user.');
  return lines.join('\n');
}

function invalid(message: string, option?: string): ConfigurationError {
  return new ConfigurationError(message, { code: 'CONFIGURATION_INVALID', ...(option ? { option } : {}) });
}

function checkDefinition(definition: SwarmDefinition): SwarmPlan {
  if (typeof definition !== 'object' || definition === null) {
    throw invalid('defineSwarm() takes a definition object.');
  }
  const { name } = definition;
  if (typeof name !== 'string' || name.trim() === '') {
    throw new ConfigurationError('A swarm needs a non-empty name.', { code: 'AGENT_NAME_INVALID' });
  }
  for (const key of Object.keys(definition)) {
    if (!definitionKeys.has(key)) {
      throw new ConfigurationError(
        `Swarm '${name}' has no option '${key}'. Known options: ${[...definitionKeys].join(', ')}.`,
        { code: 'OPTION_UNKNOWN', option: key, known: [...definitionKeys] },
      );
    }
  }
  const members = checkMembers(name, definition.members);
  const { start } = definition;
  if (typeof start !== 'string' || !members.has(start)) {
    throw invalid(
      `Swarm '${name}' starts with '${String(start)}', which is not a member. Members: ${[...members.keys()].join(', ')}.`,
      'start',
    );
  }
  const handoffs = checkHandoffs(name, definition.handoffs, members);
  const maxSteps = definition.maxSteps ?? defaultMaxSteps;
  if (!wholeNumberAtLeast(maxSteps, 1)) {
    throw invalid(
      `Swarm '${name}' has maxSteps = ${maxSteps}; use a whole number of at least 1.`,
      'maxSteps',
    );
  }
  const maxHandoffRepeats = definition.maxHandoffRepeats ?? defaultMaxHandoffRepeats;
  if (!wholeNumberAtLeast(maxHandoffRepeats, 1)) {
    throw invalid(
      `Swarm '${name}' has maxHandoffRepeats = ${maxHandoffRepeats}; use a whole number of at least 1.`,
      'maxHandoffRepeats',
    );
  }
  const memberOptions = checkMemberOptions(name, definition.memberOptions, members);
  return { name, members, start, handoffs, maxSteps, maxHandoffRepeats, memberOptions };
}

function checkMembers(name: string, members: unknown): Map<string, Agent> {
  if (!Array.isArray(members) || members.length === 0) {
    throw invalid(`Swarm '${name}' needs members: a non-empty array of agents (defineAgent).`, 'members');
  }
  const byName = new Map<string, Agent>();
  for (const member of members) {
    if (!isAgent(member)) {
      throw invalid(`Every member of swarm '${name}' must be an agent made by defineAgent.`, 'members');
    }
    if (byName.has(member.name)) {
      throw invalid(
        `Swarm '${name}' has two members named '${member.name}'; members are known by name, so names must differ.`,
        'members',
      );
    }
    byName.set(member.name, member);
  }
  return byName;
}

function checkHandoffs(
  name: string,
  handoffs: unknown,
  members: ReadonlyMap<string, Agent>,
): Map<string, readonly string[]> {
  if (typeof handoffs !== 'object' || handoffs === null || Array.isArray(handoffs)) {
    throw invalid(
      `Swarm '${name}' needs handoffs: an object from a member's name to the members it may hand off to.`,
      'handoffs',
    );
  }
  const checked = new Map<string, readonly string[]>();
  for (const [from, targets] of Object.entries(handoffs)) {
    if (!members.has(from)) {
      throw invalid(`handoffs of swarm '${name}' names '${from}', which is not a member.`, 'handoffs');
    }
    if (!Array.isArray(targets)) {
      throw invalid(`handoffs.${from} of swarm '${name}' must be an array of member names.`, 'handoffs');
    }
    const toolNames = new Map<string, string>();
    for (const to of new Set<unknown>(targets)) {
      if (typeof to !== 'string' || !members.has(to)) {
        throw invalid(
          `handoffs.${from} of swarm '${name}' names '${String(to)}', which is not a member.`,
          'handoffs',
        );
      }
      if (to === from) {
        throw invalid(`handoffs.${from} of swarm '${name}' hands off to itself; remove '${to}'.`, 'handoffs');
      }
      const toolName = transferToolName(to);
      const clash = toolNames.get(toolName);
      if (clash !== undefined) {
        throw invalid(
          `handoffs.${from} of swarm '${name}': members '${clash}' and '${to}' would both get the tool name '${toolName}'; rename one.`,
          'handoffs',
        );
      }
      toolNames.set(toolName, to);
    }
    checked.set(from, Object.freeze([...toolNames.values()]));
  }
  return checked;
}

function checkMemberOptions(
  name: string,
  memberOptions: unknown,
  members: ReadonlyMap<string, Agent>,
): Map<string, SwarmMemberOptions> {
  const checked = new Map<string, SwarmMemberOptions>();
  if (memberOptions === undefined) return checked;
  if (typeof memberOptions !== 'object' || memberOptions === null || Array.isArray(memberOptions)) {
    throw invalid(
      `memberOptions of swarm '${name}' must be an object keyed by member name.`,
      'memberOptions',
    );
  }
  for (const [member, options] of Object.entries(memberOptions)) {
    if (!members.has(member)) {
      throw invalid(
        `memberOptions of swarm '${name}' names '${member}', which is not a member.`,
        'memberOptions',
      );
    }
    if (typeof options !== 'object' || options === null) {
      throw invalid(`memberOptions.${member} of swarm '${name}' must be an object.`, 'memberOptions');
    }
    for (const key of Object.keys(options)) {
      if (!memberOptionKeys.has(key)) {
        throw new ConfigurationError(
          `memberOptions.${member} of swarm '${name}' has no option '${key}'. Known options: ${[...memberOptionKeys].join(', ')}.`,
          { code: 'OPTION_UNKNOWN', option: key, known: [...memberOptionKeys] },
        );
      }
    }
    const { timeoutMs, retries, retryDelayMs } = options as SwarmMemberOptions;
    if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
      throw invalid(
        `memberOptions.${member}.timeoutMs of swarm '${name}' is ${timeoutMs}; use a positive number of milliseconds.`,
        'timeoutMs',
      );
    }
    if (retries !== undefined && !wholeNumberAtLeast(retries, 0)) {
      throw invalid(
        `memberOptions.${member}.retries of swarm '${name}' is ${retries}; use a whole number of at least 0.`,
        'retries',
      );
    }
    if (retryDelayMs !== undefined && !(Number.isFinite(retryDelayMs) && retryDelayMs >= 0)) {
      throw invalid(
        `memberOptions.${member}.retryDelayMs of swarm '${name}' is ${retryDelayMs}; use a number of milliseconds of at least 0.`,
        'retryDelayMs',
      );
    }
    checked.set(member, Object.freeze({ ...(options as SwarmMemberOptions) }));
  }
  return checked;
}
