import { ConfigurationError } from './errors.js';
import { decodePausedRun } from './paused-run.js';
import { asSessionError, defaultSessionLockTimeoutMs, OpenedRunSession } from './run-session.js';
import type { Runtime } from './runtime.js';
import { checkSessionActor, checkSessionId } from './session-identity.js';
import type { OpenedSessionV1, SessionStoreV1 } from './session-store.js';
import { approvalsOf, type PendingApproval } from './tool-approval.js';

/** What `runtime.readSession()` takes. */
type SessionReadRequest = Parameters<Runtime['readSession']>[0];
/** What `runtime.readSession()` resolves. */
type SessionRead = Awaited<ReturnType<Runtime['readSession']>>;

const requestKeys = new Set(['id', 'actor', 'limit', 'before', 'lockTimeoutMs', 'signal']);

function invalid(message: string, option: string): ConfigurationError {
  return new ConfigurationError(message, { code: 'SESSION_OPTION_INVALID', option });
}

interface CheckedRequest {
  readonly id: string;
  readonly actor: string;
  readonly limit: number;
  readonly before: number | undefined;
  readonly lockTimeoutMs: number;
  readonly signal: AbortSignal | undefined;
}

/** Checks everything before the session is opened, so a bad request never waits for its lock. */
function checkRequest(request: unknown): CheckedRequest {
  if (typeof request !== 'object' || request === null || Array.isArray(request)) {
    throw invalid('readSession() takes { id, actor }, such as { id: chatId, actor: userId }.', 'request');
  }
  for (const key of Object.keys(request)) {
    if (!requestKeys.has(key)) {
      throw new ConfigurationError(
        `readSession() has no option '${key}'. Known options: ${[...requestKeys].join(', ')}.`,
        { code: 'OPTION_UNKNOWN', option: key, known: [...requestKeys] },
      );
    }
  }
  const { id, actor, limit = 50, before, lockTimeoutMs, signal } = request as SessionReadRequest;
  if (!Number.isSafeInteger(limit) || limit < 0) {
    throw invalid(`readSession() takes a limit of 0 or more, got ${String(limit)}.`, 'limit');
  }
  if (before !== undefined && (!Number.isSafeInteger(before) || before < 0)) {
    throw invalid(`readSession() takes before as a position (0 or more), got ${String(before)}.`, 'before');
  }
  const timeout = lockTimeoutMs ?? defaultSessionLockTimeoutMs;
  if (typeof timeout !== 'number' || !Number.isFinite(timeout) || timeout < 0) {
    throw invalid(
      `readSession() takes lockTimeoutMs as milliseconds, 0 or more; got ${String(timeout)}.`,
      'lockTimeoutMs',
    );
  }
  return {
    id: checkSessionId(id, 'id'),
    actor: checkSessionActor(actor, 'actor'),
    limit,
    before,
    lockTimeoutMs: timeout,
    signal,
  };
}

/** What a paused run kept in the session waits for, and its turn so far; nothing when none is paused. */
function pausedPartsOf(handle: OpenedSessionV1): Pick<SessionRead, 'pendingApprovals' | 'pausedTurn'> {
  if (handle.pause === undefined)
    return { pendingApprovals: Object.freeze([]), pausedTurn: Object.freeze([]) };
  const paused = decodePausedRun(handle.pause, handle.id);
  const pending = paused.calls.filter((call) => call.status === 'pending');
  return {
    pendingApprovals: approvalsOf(pending, paused.agentName),
    pausedTurn: Object.freeze([...paused.turn]),
  };
}

/**
 * `runtime.readSession()`: opens the session like a run does (the owner check, the lock), reads its
 * newest messages and its paused run's pending approvals and turn, and releases it. Writes nothing.
 */
export async function readSession(store: SessionStoreV1 | undefined, request: unknown): Promise<SessionRead> {
  if (store === undefined) {
    throw new ConfigurationError(
      'readSession() reads a session store, but this runtime has none: pass one to createRuntime({ sessionStore }), such as memorySessionStore() or sqliteSessionStore({ path }) from @ghost/session-sqlite.',
      { code: 'SESSION_OPTION_INVALID', option: 'sessionStore' },
    );
  }
  const { id, actor, limit, before, lockTimeoutMs, signal } = checkRequest(request);
  let handle: OpenedSessionV1;
  try {
    handle = await store.open({ id, actor, lockTimeoutMs, ...(signal === undefined ? {} : { signal }) });
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    throw asSessionError(error, store.name, id);
  }
  try {
    if (handle.isNew) return { exists: false, history: [], pendingApprovals: [], pausedTurn: [] };
    const session = new OpenedRunSession(store, handle);
    const history = await session.history(before === undefined ? { limit } : { limit, before });
    return { exists: true, history, ...pausedPartsOf(handle) };
  } finally {
    await handle.release();
  }
}
