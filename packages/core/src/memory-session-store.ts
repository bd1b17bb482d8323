import { MemorySessionLocks } from './memory-session-locks.js';
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
  const store = new MemorySessionStore(limits);
  return defineSessionStore({
    kind: 'session-store' as const,
    specificationVersion: 'session-store-v1' as const,
    name: 'memory',
    limits,
    open: (request: SessionOpenRequest) => store.open(request),
    list: (request: SessionListRequest) => store.list(request),
    delete: (request: SessionDeleteRequest) => store.delete(request),
    prune: (request: SessionPruneRequest) => store.prune(request),
    close: async () => store.close(),
  });
}

type SessionDeleteRequest = Parameters<SessionStoreV1['delete']>[0];
type SessionPruneRequest = Parameters<SessionStoreV1['prune']>[0];

/** The state of one {@link memorySessionStore} and its operations, one method each. */
class MemorySessionStore {
  readonly #limits: SessionLimits;
  readonly #sessions = new Map<string, SessionDocument>();
  readonly #locks = new MemorySessionLocks();
  #nextSequence = 0;
  #isClosed = false;

  constructor(limits: SessionLimits) {
    this.#limits = limits;
  }

  async open(request: SessionOpenRequest): Promise<OpenedSessionV1> {
    this.#throwIfClosed();
    const { id, actor, lockTimeoutMs, signal } = checkSessionOpenRequest(request);
    signal?.throwIfAborted();
    this.#ownedBy(id, actor); // refused before waiting, so a refused actor learns nothing of the lock
    const holder = Symbol(id);
    await this.#locks.acquire(id, holder, lockTimeoutMs, signal);
    try {
      this.#ownedBy(id, actor); // another actor may have created it while this one waited
    } catch (error) {
      this.#locks.release(id, holder);
      throw error;
    }
    return this.#openedSession(id, actor, holder);
  }

  async list(request: SessionListRequest): Promise<SessionPage> {
    this.#throwIfClosed();
    return sessionDocumentPage(this.#sessions.values(), checkSessionListRequest(request));
  }

  async delete(request: SessionDeleteRequest): Promise<boolean> {
    this.#throwIfClosed();
    const { id, actor, lockTimeoutMs } = checkSessionDeleteRequest(request);
    if (this.#sessions.get(id)?.actor !== actor) return false;
    const holder = Symbol(id);
    await this.#locks.acquire(id, holder, lockTimeoutMs);
    try {
      if (this.#sessions.get(id)?.actor !== actor) return false;
      this.#sessions.delete(id);
      return true;
    } finally {
      this.#locks.release(id, holder);
    }
  }

  async prune({ olderThan }: SessionPruneRequest): Promise<number> {
    this.#throwIfClosed();
    const cutoff = checkSessionPruneRequest({ olderThan }).getTime();
    let pruned = 0;
    for (const [id, session] of this.#sessions) {
      if (session.updatedAt < cutoff && !this.#locks.isHeld(id)) {
        this.#sessions.delete(id);
        pruned += 1;
      }
    }
    return pruned;
  }

  close(): void {
    this.#isClosed = true;
  }

  #throwIfClosed(): void {
    if (this.#isClosed) {
      throw new SessionStoreError(
        "Session store 'memory' is closed; create a new one with memorySessionStore().",
        { store: 'memory', reason: 'closed' },
      );
    }
  }

  #ownedBy(id: string, actor: string): SessionDocument | undefined {
    const session = this.#sessions.get(id);
    if (session !== undefined && session.actor !== actor) throw new SessionAccessError();
    return session;
  }

  #openedSession(id: string, actor: string, holder: symbol): OpenedSessionV1 {
    const stored = this.#sessions.get(id);
    let totals = { messageCount: stored?.records.length ?? 0, byteCount: stored?.byteCount ?? 0 };
    let pause = stored?.pause;
    const requireLock = () => {
      this.#throwIfClosed();
      if (!this.#locks.isHeldBy(id, holder)) {
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
        return sessionDocumentHistory(this.#sessions.get(id), request);
      },
      write: async (write: SessionWrite): Promise<SessionWriteResult> => {
        requireLock();
        const change = this.#write(id, actor, write);
        if (change.status === 'applied') pause = change.document.pause;
        totals = { messageCount: change.result.messageCount, byteCount: change.result.byteCount };
        return change.result;
      },
      release: async () => this.#locks.release(id, holder),
    });
  }

  /** Applies one write to the stored document of `id`, storing the new document if it applied. */
  #write(id: string, actor: string, write: SessionWrite) {
    const change = applySessionWrite(
      this.#sessions.get(id),
      { id, actor, sequence: this.#nextSequence },
      write,
      this.#limits,
    );
    if (change.status === 'applied') {
      if (!this.#sessions.has(id)) this.#nextSequence += 1;
      this.#sessions.set(id, change.document);
    }
    return change;
  }
}
