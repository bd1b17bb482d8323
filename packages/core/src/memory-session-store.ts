import { SessionAccessError, SessionBusyError, SessionStoreError } from './session-errors.js';
import {
  defaultSessionLimits,
  type OpenedSessionV1,
  type SessionLimits,
  type SessionListRequest,
  type SessionOpenRequest,
  type SessionPage,
  type SessionStoreV1,
  type SessionWrite,
  type SessionWriteResult,
} from './session-store.js';
import { defineSessionStore } from './session-store-kit/define-session-store.js';
import {
  applySessionWrite,
  type SessionDocument,
  sessionDocumentHistory,
  sessionDocumentPage,
} from './session-store-kit/session-document.js';
import { checkSessionListRequest } from './session-store-kit/session-list-request.js';
import {
  checkSessionDeleteRequest,
  checkSessionOpenRequest,
  checkSessionPruneRequest,
} from './session-store-kit/session-requests.js';

/** The options of {@link memorySessionStore}. */
export interface MemorySessionStoreOptions {
  /** What one session may hold, over {@link defaultSessionLimits} key by key. */
  readonly limits?: Partial<SessionLimits>;
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
  const sessions = new Map<string, SessionDocument>();
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
    let totals = { messageCount: stored?.records.length ?? 0, byteCount: stored?.byteCount ?? 0 };
    let pause = stored?.pause;
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
        return totals.messageCount;
      },
      get byteCount() {
        return totals.byteCount;
      },
      get pause() {
        return pause;
      },
      history: async (request: { readonly limit: number; readonly before?: number }) => {
        requireLock();
        return sessionDocumentHistory(sessions.get(id), request);
      },
      write: async (write: SessionWrite): Promise<SessionWriteResult> => {
        requireLock();
        const change = applySessionWrite(
          sessions.get(id),
          { id, actor, sequence: nextSequence },
          write,
          limits,
        );
        if (change.status === 'applied') {
          if (!sessions.has(id)) nextSequence += 1;
          sessions.set(id, change.document);
          pause = change.document.pause;
        }
        totals = { messageCount: change.result.messageCount, byteCount: change.result.byteCount };
        return change.result;
      },
      release: async () => release(id, holder),
    });
  };

  const list = async (request: SessionListRequest): Promise<SessionPage> => {
    throwIfClosed();
    return sessionDocumentPage(sessions.values(), checkSessionListRequest(request));
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
      if (session.updatedAt < cutoff && locks.get(id)?.holder === undefined) {
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
