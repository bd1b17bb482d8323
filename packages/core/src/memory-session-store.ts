import type { JsonObject } from './json.js';
import {
  SessionAccessError,
  SessionBusyError,
  SessionConflictError,
  SessionStoreError,
} from './session-errors.js';
import {
  defaultSessionLimits,
  type OpenedSessionV1,
  type SessionLimits,
  type SessionListRequest,
  type SessionOpenRequest,
  type SessionPage,
  type SessionRecord,
  type SessionStoreV1,
  type SessionWrite,
  type SessionWriteResult,
} from './session-store.js';
import { defineSessionStore } from './session-store-kit/define-session-store.js';
import { checkSessionListRequest, sessionListCursor } from './session-store-kit/session-list-request.js';
import {
  checkSessionDeleteRequest,
  checkSessionOpenRequest,
  checkSessionPruneRequest,
} from './session-store-kit/session-requests.js';
import { planSessionWrite } from './session-store-kit/session-write-plan.js';

/** The options of {@link memorySessionStore}. */
export interface MemorySessionStoreOptions {
  /** What one session may hold, over {@link defaultSessionLimits} key by key. */
  readonly limits?: Partial<SessionLimits>;
}

interface StoredRecord extends SessionRecord {
  readonly bytes: number;
}

interface MemorySession {
  readonly id: string;
  readonly actor: string;
  readonly sequence: number;
  readonly createdAt: Date;
  updatedAt: Date;
  state: JsonObject;
  records: StoredRecord[];
  byteCount: number;
  readonly operations: Map<string, string>;
}

/** One session's lock: who holds it and who waits, first come first served. */
interface SessionLock {
  holder: symbol | undefined;
  readonly waiters: (() => void)[];
}

/**
 * A session store in this process's memory: for tests, and for an application with one process that
 * may lose its conversations when it stops. Runs on one session wait for each other in order.
 *
 * @example
 * ```ts
 * const runtime = createRuntime({ sessionStore: memorySessionStore() });
 * await agent.ask('Hi, I am Ada.', { runtime, session: { id: 'chat-1', actor: 'user-42' } });
 * const run = await agent.ask('What is my name?', { runtime, session: { id: 'chat-1', actor: 'user-42' } });
 * ```
 */
export function memorySessionStore(options: MemorySessionStoreOptions = {}): SessionStoreV1 {
  const limits: SessionLimits = Object.freeze({ ...defaultSessionLimits, ...options.limits });
  const sessions = new Map<string, MemorySession>();
  const locks = new Map<string, SessionLock>();
  let nextSequence = 0;
  let isClosed = false;

  const throwIfClosed = () => {
    if (isClosed) {
      throw new SessionStoreError(
        "Session store 'memory' is closed; create a new one with memorySessionStore().",
        { store: 'memory', reason: 'closed' },
      );
    }
  };

  const ownedBy = (id: string, actor: string) => {
    const session = sessions.get(id);
    if (session !== undefined && session.actor !== actor) throw new SessionAccessError();
    return session;
  };

  /** Takes the lock of `id` for `holder`, waiting behind earlier holders until `timeoutMs`. */
  const acquire = (id: string, holder: symbol, timeoutMs: number, signal?: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      let lock = locks.get(id);
      if (lock === undefined) {
        lock = { holder: undefined, waiters: [] };
        locks.set(id, lock);
      }
      const current = lock;
      if (current.holder === undefined) {
        current.holder = holder;
        resolve();
        return;
      }
      const settle = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const index = current.waiters.indexOf(wake);
        if (index >= 0) current.waiters.splice(index, 1);
        forgetIfIdle(id);
      };
      const wake = () => {
        current.holder = holder; // before settle(), which forgets a lock nobody holds
        settle();
        resolve();
      };
      const onAbort = () => {
        settle();
        reject(signal?.reason);
      };
      const timer = setTimeout(() => {
        settle();
        reject(
          new SessionBusyError(
            `Session '${id}' of store 'memory' is held by another run, which did not release it within ${timeoutMs} ms. Nothing was written; try again when that run has ended, or raise lockTimeoutMs.`,
            { store: 'memory', sessionId: id, reason: 'timeout', lockTimeoutMs: timeoutMs },
          ),
        );
      }, timeoutMs);
      current.waiters.push(wake);
      signal?.addEventListener('abort', onAbort, { once: true });
    });

  const release = (id: string, holder: symbol) => {
    const lock = locks.get(id);
    if (lock?.holder !== holder) return;
    lock.holder = undefined;
    const next = lock.waiters[0];
    if (next === undefined) forgetIfIdle(id);
    else next();
  };

  const forgetIfIdle = (id: string) => {
    const lock = locks.get(id);
    if (lock !== undefined && lock.holder === undefined && lock.waiters.length === 0) locks.delete(id);
  };

  const isHeldBy = (id: string, holder: symbol) => locks.get(id)?.holder === holder;

  const open = async (request: SessionOpenRequest): Promise<OpenedSessionV1> => {
    throwIfClosed();
    const { id, actor, lockTimeoutMs, signal } = checkSessionOpenRequest(request);
    signal?.throwIfAborted();
    ownedBy(id, actor); // refused before waiting, so a refused actor learns nothing of the lock
    const holder = Symbol(id);
    await acquire(id, holder, lockTimeoutMs, signal);
    try {
      ownedBy(id, actor); // another actor may have created it while this one waited
    } catch (error) {
      release(id, holder);
      throw error;
    }
    return openedSession(id, actor, holder);
  };

  const openedSession = (id: string, actor: string, holder: symbol): OpenedSessionV1 => {
    const stored = sessions.get(id);
    let messageCount = stored?.records.length ?? 0;
    let byteCount = stored?.byteCount ?? 0;
    const requireLock = () => {
      throwIfClosed();
      if (!isHeldBy(id, holder)) {
        throw new SessionBusyError(
          `This run no longer holds session '${id}' of store 'memory' (it was released), so nothing was written.`,
          { store: 'memory', sessionId: id, reason: 'lock-lost' },
        );
      }
    };
    return Object.freeze({
      id,
      actor,
      isNew: stored === undefined,
      state: structuredClone(stored?.state ?? {}),
      get messageCount() {
        return messageCount;
      },
      get byteCount() {
        return byteCount;
      },
      history: async ({ limit, before }: { readonly limit: number; readonly before?: number }) => {
        requireLock();
        const records = sessions.get(id)?.records ?? [];
        const end = Math.min(before ?? records.length, records.length);
        return records.slice(Math.max(0, end - limit), end).map(publicRecord);
      },
      write: async (write: SessionWrite): Promise<SessionWriteResult> => {
        requireLock();
        const result = applyWrite(id, actor, write);
        messageCount = result.messageCount;
        byteCount = result.byteCount;
        return result;
      },
      release: async () => release(id, holder),
    });
  };

  const applyWrite = (id: string, actor: string, write: SessionWrite): SessionWriteResult => {
    const existing = sessions.get(id);
    const digest = existing?.operations.get(write.operationId);
    if (digest !== undefined) {
      if (digest !== write.digest) {
        throw new SessionConflictError(
          `Operation '${write.operationId}' was already applied to this session with other content, so this write was refused. Give each distinct write its own operation id.`,
          { reason: 'operation-reused', operationId: write.operationId, sessionId: id },
        );
      }
      return {
        status: 'already-applied',
        messageCount: existing?.records.length ?? 0,
        byteCount: existing?.byteCount ?? 0,
      };
    }
    const records = existing?.records ?? [];
    const from = write.replaceFrom?.position ?? records.length;
    if (write.replaceFrom !== undefined) {
      const { expected } = write.replaceFrom;
      const tail = records.slice(from);
      const matches =
        from >= 0 &&
        from + expected.length === records.length &&
        tail.every((stored, index) => stored.message === expected[index]);
      if (!matches) {
        throw new SessionConflictError(
          'The messages replace() expected at the end of the history are no longer there, so nothing was changed. Read the history again and retry.',
          { reason: 'tail-moved', operationId: write.operationId, sessionId: id },
        );
      }
    }
    const removed = records.slice(from);
    const plan = planSessionWrite(
      limits,
      { messageCount: records.length, byteCount: existing?.byteCount ?? 0 },
      {
        removedCount: removed.length,
        removedBytes: removed.reduce((sum, stored) => sum + stored.bytes, 0),
        messages: write.messages,
        state: write.state,
      },
      id,
    );
    const now = new Date();
    const session: MemorySession = existing ?? {
      id,
      actor,
      sequence: nextSequence++,
      createdAt: now,
      updatedAt: now,
      state: {},
      records: [],
      byteCount: 0,
      operations: new Map(),
    };
    const added = write.messages.map(
      (message, index): StoredRecord =>
        Object.freeze({
          position: from + index,
          message,
          operationId: write.operationId,
          ...(write.outcome === undefined ? {} : { outcome: write.outcome }),
          createdAt: now,
          bytes: plan.messageBytes[index] ?? 0,
        }),
    );
    session.records = [...records.slice(0, from), ...added];
    session.byteCount = plan.byteCount;
    if (plan.stateText !== undefined) session.state = JSON.parse(plan.stateText) as JsonObject;
    session.updatedAt = now;
    session.operations.set(write.operationId, write.digest);
    sessions.set(id, session);
    return { status: 'applied', messageCount: plan.messageCount, byteCount: plan.byteCount };
  };

  const list = async (request: SessionListRequest): Promise<SessionPage> => {
    throwIfClosed();
    const { actor, limit, after } = checkSessionListRequest(request);
    const owned = [...sessions.values()]
      .filter((session) => session.actor === actor && (after === undefined || session.sequence < after))
      .sort((left, right) => right.sequence - left.sequence);
    const page = owned.slice(0, limit);
    const last = page.at(-1);
    return {
      sessions: page.map((session) => ({
        id: session.id,
        actor: session.actor,
        messageCount: session.records.length,
        byteCount: session.byteCount,
        createdAt: new Date(session.createdAt),
        updatedAt: new Date(session.updatedAt),
      })),
      ...(owned.length > limit && last !== undefined ? { nextCursor: sessionListCursor(last.sequence) } : {}),
    };
  };

  const remove = async (request: {
    readonly id: string;
    readonly actor: string;
    readonly lockTimeoutMs?: number;
  }): Promise<boolean> => {
    throwIfClosed();
    const { id, actor, lockTimeoutMs } = checkSessionDeleteRequest(request);
    if (sessions.get(id)?.actor !== actor) return false;
    const holder = Symbol(id);
    await acquire(id, holder, lockTimeoutMs);
    try {
      if (sessions.get(id)?.actor !== actor) return false;
      sessions.delete(id);
      return true;
    } finally {
      release(id, holder);
    }
  };

  const prune = async ({ olderThan }: { readonly olderThan: Date }): Promise<number> => {
    throwIfClosed();
    const cutoff = checkSessionPruneRequest({ olderThan }).getTime();
    let pruned = 0;
    for (const [id, session] of sessions) {
      if (session.updatedAt.getTime() < cutoff && locks.get(id)?.holder === undefined) {
        sessions.delete(id);
        pruned += 1;
      }
    }
    return pruned;
  };

  return defineSessionStore({
    kind: 'session-store' as const,
    specificationVersion: 'session-store-v1' as const,
    name: 'memory',
    limits,
    open,
    list,
    delete: remove,
    prune,
    close: async () => {
      isClosed = true;
    },
  });
}

function publicRecord(stored: StoredRecord): SessionRecord {
  return {
    position: stored.position,
    message: stored.message,
    operationId: stored.operationId,
    ...(stored.outcome === undefined ? {} : { outcome: stored.outcome }),
    createdAt: new Date(stored.createdAt),
  };
}
