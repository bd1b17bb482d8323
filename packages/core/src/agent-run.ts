import type { AskOptions } from './agent.js';
import { type CheckedAgentDefinition, checkRecord } from './agent-definition-check.js';
import { type AgentInput, conversationOf, latestUserText } from './agent-input.js';
import { invocationEntrypoint } from './agent-invocation.js';
import { checkApprovalMode } from './agent-resume.js';
import { ConfigurationError } from './errors.js';
import { randomUUID } from './lazy-builtins.js';
import type { ModelSettings, ProviderOptions } from './model.js';
import { rejectUnknownKeys } from './reject-unknown-keys.js';
import { Run, type RunInit } from './run.js';
import type { Invocation } from './run-context.js';
import { type CheckedSessionOptions, checkSessionOptions } from './run-session.js';
import { defaultRuntime, type Runtime } from './runtime.js';
import type { SessionStoreV1 } from './session-store.js';
import { prepareStructuredOutput } from './structured-output.js';

const askOptionKeys = new Set([
  'signal',
  'timeoutMs',
  'deadline',
  'actorId',
  'session',
  'context',
  'metadata',
  'runtime',
  'output',
  'modelSettings',
  'providerOptions',
  'includeAgentEvents',
  'approvals',
]);

/** A run of the agent on `input` (or, given `resume`, of a paused run), its options checked first. */
export function createAgentRun(
  agent: CheckedAgentDefinition,
  input: AgentInput,
  options: AskOptions = {},
  resume?: RunInit['resume'],
): Run {
  const { name } = agent;
  if (typeof input !== 'string' && !Array.isArray(input)) {
    throw new ConfigurationError(
      `Agent '${name}' takes its input as a string or an array of messages (such as run.messages).`,
      { code: 'AGENT_INPUT_INVALID' },
    );
  }
  rejectUnknownKeys(options, askOptionKeys, 'ask()');
  if (options.includeAgentEvents !== undefined && typeof options.includeAgentEvents !== 'boolean') {
    throw new ConfigurationError('ask() option includeAgentEvents must be true or false.', {
      code: 'AGENT_OPTION_INVALID',
      option: 'includeAgentEvents',
    });
  }
  // A resume's conversation is the paused turn, read when its session opens.
  const conversation = resume === undefined ? conversationOf(name, input) : [];
  const output = options.output === undefined ? agent.output : prepareStructuredOutput(name, options.output);
  const settings = mergeSettings(agent.settings, checkRecord(name, 'modelSettings', options.modelSettings));
  const providerOptions = mergeProviderOptions(
    agent.providerOptions,
    checkRecord(name, 'providerOptions', options.providerOptions),
  );
  const runtime = options.runtime ?? defaultRuntime();
  const session = checkRunSession(agent, runtime, options);
  const approvals = checkApprovalMode(options.approvals, session !== undefined);
  return new Run({
    invocation: invocationOf(name, latestUserText(conversation), options, session?.options),
    runtime,
    signal: options.signal,
    telemetry: [...runtime.telemetry, ...agent.telemetry],
    includeAgentEvents: options.includeAgentEvents === true,
    approvals,
    ...(resume === undefined ? {} : { resume }),
    ...(session !== undefined ? { session } : {}),
    entrypoint: invocationEntrypoint(agent, conversation, {
      ...(output ? { output } : {}),
      ...(settings ? { settings } : {}),
      ...(providerOptions ? { providerOptions } : {}),
    }),
  });
}

/** @internal The earlier of `timeoutMs` from now and `deadline`, checked; shared with assemblies' runs. */
export function resolveDeadline(options: {
  readonly timeoutMs?: number | undefined;
  readonly deadline?: Date | number | undefined;
}): number | undefined {
  const candidates: number[] = [];
  if (options.timeoutMs !== undefined) {
    if (!Number.isFinite(options.timeoutMs) || options.timeoutMs < 0) {
      throw new ConfigurationError(
        `timeoutMs must be a non-negative number of milliseconds, not ${options.timeoutMs}.`,
      );
    }
    candidates.push(Date.now() + options.timeoutMs);
  }
  if (options.deadline !== undefined) {
    const deadline = options.deadline instanceof Date ? options.deadline.getTime() : options.deadline;
    if (!Number.isFinite(deadline))
      throw new ConfigurationError('deadline must be a valid Date or epoch milliseconds.');
    candidates.push(deadline);
  }
  return candidates.length === 0 ? undefined : Math.min(...candidates);
}

/**
 * The run's session and the store that keeps it, checked against the runtime and the agent: a
 * session (or a persisted subagent) needs a session store, and a session has one actor.
 */
function checkRunSession(
  agent: CheckedAgentDefinition,
  runtime: Runtime,
  options: AskOptions,
): { readonly store: SessionStoreV1; readonly options: CheckedSessionOptions } | undefined {
  if (agent.hasPersistedSubagents && runtime.sessionStore === undefined) {
    throw new ConfigurationError(
      `Agent '${agent.name}' has subagents with persist: true, but the runtime has no session store to keep them in: pass one to createRuntime({ sessionStore }), or drop persist.`,
      { code: 'AGENT_SUBAGENT_INVALID', option: 'subagents' },
    );
  }
  const session = options.session === undefined ? undefined : checkSessionOptions(options.session);
  const sessionStore = session === undefined ? undefined : runtime.sessionStore;
  if (session !== undefined && sessionStore === undefined) {
    throw new ConfigurationError(
      'ask() was given a session, but the runtime has no session store: pass one to createRuntime({ sessionStore }), such as memorySessionStore() or sqliteSessionStore({ path }) from @ghost/session-sqlite.',
      { code: 'SESSION_OPTION_INVALID', option: 'session' },
    );
  }
  if (session !== undefined && options.actorId !== undefined && options.actorId !== session.actor) {
    throw new ConfigurationError(
      "ask() was given an actorId and a session whose actor differs: a run has one trusted actor, so give only the session's actor, or the same in both.",
      { code: 'SESSION_OPTION_INVALID', option: 'actorId', conflicting: ['session.actor'] },
    );
  }
  return session !== undefined && sessionStore !== undefined
    ? { store: sessionStore, options: session }
    : undefined;
}

/** The run's own invocation of the agent: who asked, in what session, and by when. */
function invocationOf(
  agentName: string,
  inputText: string,
  options: AskOptions,
  session: CheckedSessionOptions | undefined,
): Invocation {
  const runId = randomUUID();
  return Object.freeze({
    invocationId: randomUUID(),
    runId,
    agentName,
    input: inputText,
    actorId: session?.actor ?? options.actorId,
    sessionId: session?.id,
    context: Object.freeze({ ...options.context }),
    metadata: Object.freeze({ ...options.metadata }),
    deadline: resolveDeadline(options),
  });
}

function mergeSettings(
  agent: ModelSettings | undefined,
  ask: ModelSettings | undefined,
): ModelSettings | undefined {
  if (agent === undefined || ask === undefined) return ask ?? agent;
  return { ...agent, ...ask };
}

function mergeProviderOptions(
  agent: ProviderOptions | undefined,
  ask: ProviderOptions | undefined,
): ProviderOptions | undefined {
  if (agent === undefined || ask === undefined) return ask ?? agent;
  const merged: Record<string, ProviderOptions[string]> = { ...agent };
  for (const [provider, options] of Object.entries(ask))
    merged[provider] = { ...agent[provider], ...options };
  return merged;
}
