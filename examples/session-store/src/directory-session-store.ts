import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as kit from '@ghost/core/session-store';

/** A lock file not refreshed for this long belongs to a crashed holder. */
const leaseMs = 10_000;
const store = 'directory';

/**
 * A session store in a directory, shared by the processes of one machine. Each session is one JSON
 * file (a `kit.SessionDocument`), written whole and renamed into place, so a crash never leaves half a
 * write. A run holds a session through a lock file created exclusively (`wx`) and refreshed while it
 * runs; one older than the lease is taken over.
 */
export function directorySessionStore(options: {
  readonly root: string;
  readonly limits?: Partial<kit.SessionLimits>;
}): kit.SessionStoreV1 {
  const limits = { ...kit.defaultSessionLimits, ...options.limits };
  const directory = new SessionDirectory(options.root);
  return kit.defineSessionStore({
    ...{ kind: 'session-store', specificationVersion: 'session-store-v1', name: store, limits },
    open: (request) => openSession(directory, limits, request),
    list: async (request) =>
      kit.sessionDocumentPage(await directory.everySession(), kit.checkSessionListRequest(request)),
    delete: async (request) => {
      const { id, actor, lockTimeoutMs } = kit.checkSessionDeleteRequest(request);
      if ((await directory.load(id))?.actor !== actor) return false;
      const { release } = await directory.lock(id, lockTimeoutMs);
      await rm(directory.file(id, '.json'), { force: true }).finally(release);
      return true;
    },
    prune: async (request) => {
      const cutoff = kit.checkSessionPruneRequest(request).getTime();
      let pruned = 0;
      for (const { id, updatedAt } of await directory.everySession()) {
        if (updatedAt >= cutoff || !(await directory.tryLock(id, 'prune'))) continue;
        for (const suffix of ['.json', '.lock']) await rm(directory.file(id, suffix), { force: true });
        pruned += 1;
      }
      return pruned;
    },
    close: async () => directory.close(),
  });
}

/** The directory of sessions: their JSON files and their lock files. */
class SessionDirectory {
  readonly #root: string;
  #isClosed = false;

  constructor(root: string) {
    this.#root = root;
  }

  /** Ids may hold any printable character and be 256 long: name files by a digest. */
  file(id: string, suffix: string): string {
    return join(this.#root, createHash('sha256').update(id).digest('hex') + suffix);
  }

  async ready(): Promise<void> {
    if (this.#isClosed) throw new kit.SessionStoreError('This store is closed.', { store, reason: 'closed' });
    await mkdir(this.#root, { recursive: true });
  }

  close(): void {
    this.#isClosed = true;
  }

  /** The document of session `id`, `undefined` when there is none. */
  load(id: string): Promise<kit.SessionDocument | undefined> {
    return this.#loadFile(this.file(id, '.json'));
  }

  async #loadFile(path: string): Promise<kit.SessionDocument | undefined> {
    const text = await readIfExists(path);
    try {
      return text === undefined ? undefined : (JSON.parse(text) as kit.SessionDocument);
    } catch (cause) {
      throw new kit.SessionStoreError(`${path} is corrupt; delete it.`, { store, reason: 'corrupt', cause });
    }
  }

  async everySession(): Promise<kit.SessionDocument[]> {
    await this.ready();
    const names = (await readdir(this.#root)).filter((name) => name.endsWith('.json'));
    const documents = await Promise.all(names.map((name) => this.#loadFile(join(this.#root, name))));
    return documents.filter((document) => document !== undefined);
  }

  async refuseOtherActor(id: string, actor: string): Promise<void> {
    const owner = (await this.load(id))?.actor;
    if (owner !== undefined && owner !== actor) throw new kit.SessionAccessError();
  }

  async tryLock(id: string, owner: string): Promise<boolean> {
    try {
      await writeFile(this.file(id, '.lock'), owner, { flag: 'wx' });
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // Gone since: retry. Removing it here could remove a lock another run took meanwhile.
      const held = await stat(this.file(id, '.lock')).catch(() => undefined);
      if (held !== undefined && Date.now() - held.mtimeMs > leaseMs)
        await rm(this.file(id, '.lock'), { force: true }); // stale: retry
      return false;
    }
  }

  async holds(id: string, owner: string): Promise<boolean> {
    return (await readIfExists(this.file(id, '.lock'))) === owner;
  }

  /** Holds the lock of `id` as a lease, renewed while held; resolves its owner and how to release it. */
  async lock(id: string, lockTimeoutMs: number, signal?: AbortSignal) {
    const owner = randomUUID();
    const held = await kit.holdSessionLease({
      ...{ store, sessionId: id, lockTimeoutMs, signal, leaseMs },
      acquire: () => this.tryLock(id, owner),
      renew: async () => {
        if (!(await this.holds(id, owner))) return false;
        await utimes(this.file(id, '.lock'), new Date(), new Date());
        return true;
      },
      release: async () => {
        if (await this.holds(id, owner)) await rm(this.file(id, '.lock'), { force: true });
      },
    });
    return { owner, release: held.release };
  }
}

function readIfExists(path: string): Promise<string | undefined> {
  return readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
}

async function openSession(
  directory: SessionDirectory,
  limits: kit.SessionLimits,
  request: kit.SessionOpenRequest,
): Promise<kit.OpenedSessionV1> {
  const { id, actor, lockTimeoutMs, signal } = kit.checkSessionOpenRequest(request);
  await directory.ready();
  await directory.refuseOtherActor(id, actor);
  const { owner, release } = await directory.lock(id, lockTimeoutMs, signal);
  await directory.refuseOtherActor(id, actor).catch(async (error: unknown) => {
    await release();
    throw error;
  });
  const stored = await directory.load(id);
  let totals = { messageCount: stored?.records.length ?? 0, byteCount: stored?.byteCount ?? 0 };
  let pause = stored?.pause; // the paused run: the document keeps it, applySessionWrite changes it
  return {
    ...{ id, actor, isNew: stored === undefined, state: stored?.state ?? {}, release },
    get messageCount() {
      return totals.messageCount;
    },
    get byteCount() {
      return totals.byteCount;
    },
    get pause() {
      return pause;
    },
    history: async (window) => kit.sessionDocumentHistory(await directory.load(id), window),
    write: async (write) => {
      if (!(await directory.holds(id, owner)))
        throw new kit.SessionBusyError(`Lost the lock of '${id}'.`, {
          store,
          sessionId: id,
          reason: 'lock-lost',
        });
      const sequence = Number(process.hrtime.bigint() / 1000n); // grows on one machine: newest first
      const current = await directory.load(id);
      const change = kit.applySessionWrite(current, { id, actor, sequence }, write, limits);
      if (change.status === 'applied') {
        const temporary = directory.file(id, `.${randomUUID()}.tmp`);
        await writeFile(temporary, JSON.stringify(change.document));
        await rename(temporary, directory.file(id, '.json'));
        pause = change.document.pause;
      }
      totals = change.result;
      return change.result;
    },
  };
}
