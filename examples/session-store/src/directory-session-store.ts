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
  // Ids may hold any printable character and be 256 long: name files by a digest.
  const file = (id: string, suffix: string) =>
    join(options.root, createHash('sha256').update(id).digest('hex') + suffix);
  let isClosed = false;

  const ready = async () => {
    if (isClosed) throw new kit.SessionStoreError('This store is closed.', { store, reason: 'closed' });
    await mkdir(options.root, { recursive: true });
  };
  const read = (path: string) =>
    readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
  const load = async (path: string): Promise<kit.SessionDocument | undefined> => {
    const text = await read(path);
    try {
      return text === undefined ? undefined : (JSON.parse(text) as kit.SessionDocument);
    } catch (cause) {
      throw new kit.SessionStoreError(`${path} is corrupt; delete it.`, { store, reason: 'corrupt', cause });
    }
  };
  const refuseOtherActor = async (id: string, actor: string) => {
    const owner = (await load(file(id, '.json')))?.actor;
    if (owner !== undefined && owner !== actor) throw new kit.SessionAccessError();
  };
  const tryLock = async (id: string, owner: string) => {
    try {
      await writeFile(file(id, '.lock'), owner, { flag: 'wx' });
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // Gone since: retry. Removing it here could remove a lock another run took meanwhile.
      const held = await stat(file(id, '.lock')).catch(() => undefined);
      if (held !== undefined && Date.now() - held.mtimeMs > leaseMs)
        await rm(file(id, '.lock'), { force: true }); // stale: retry
      return false;
    }
  };
  const holds = async (id: string, owner: string) => (await read(file(id, '.lock'))) === owner;
  const lock = async (id: string, lockTimeoutMs: number, signal?: AbortSignal) => {
    const owner = randomUUID();
    const held = await kit.holdSessionLease({
      ...{ store, sessionId: id, lockTimeoutMs, signal, leaseMs },
      acquire: () => tryLock(id, owner),
      renew: async () => {
        if (!(await holds(id, owner))) return false;
        await utimes(file(id, '.lock'), new Date(), new Date());
        return true;
      },
      release: async () => {
        if (await holds(id, owner)) await rm(file(id, '.lock'), { force: true });
      },
    });
    return { owner, release: held.release };
  };

  const open = async (request: kit.SessionOpenRequest): Promise<kit.OpenedSessionV1> => {
    const { id, actor, lockTimeoutMs, signal } = kit.checkSessionOpenRequest(request);
    await ready();
    await refuseOtherActor(id, actor);
    const { owner, release } = await lock(id, lockTimeoutMs, signal);
    await refuseOtherActor(id, actor).catch(async (error: unknown) => {
      await release();
      throw error;
    });
    const stored = await load(file(id, '.json'));
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
      history: async (window) => kit.sessionDocumentHistory(await load(file(id, '.json')), window),
      write: async (write) => {
        if (!(await holds(id, owner)))
          throw new kit.SessionBusyError(`Lost the lock of '${id}'.`, {
            store,
            sessionId: id,
            reason: 'lock-lost',
          });
        const sequence = Number(process.hrtime.bigint() / 1000n); // grows on one machine: newest first
        const current = await load(file(id, '.json'));
        const change = kit.applySessionWrite(current, { id, actor, sequence }, write, limits);
        if (change.status === 'applied') {
          const temporary = file(id, `.${randomUUID()}.tmp`);
          await writeFile(temporary, JSON.stringify(change.document));
          await rename(temporary, file(id, '.json'));
          pause = change.document.pause;
        }
        totals = change.result;
        return change.result;
      },
    };
  };

  const everySession = async () => {
    await ready();
    const names = (await readdir(options.root)).filter((name) => name.endsWith('.json'));
    const documents = await Promise.all(names.map((name) => load(join(options.root, name))));
    return documents.filter((document) => document !== undefined);
  };

  return kit.defineSessionStore({
    ...{ kind: 'session-store', specificationVersion: 'session-store-v1', name: store, limits, open },
    list: async (request) =>
      kit.sessionDocumentPage(await everySession(), kit.checkSessionListRequest(request)),
    delete: async (request) => {
      const { id, actor, lockTimeoutMs } = kit.checkSessionDeleteRequest(request);
      if ((await load(file(id, '.json')))?.actor !== actor) return false;
      const { release } = await lock(id, lockTimeoutMs);
      await rm(file(id, '.json'), { force: true }).finally(release);
      return true;
    },
    prune: async (request) => {
      const cutoff = kit.checkSessionPruneRequest(request).getTime();
      let pruned = 0;
      for (const { id, updatedAt } of await everySession()) {
        if (updatedAt >= cutoff || !(await tryLock(id, 'prune'))) continue;
        for (const suffix of ['.json', '.lock']) await rm(file(id, suffix), { force: true });
        pruned += 1;
      }
      return pruned;
    },
    close: async () => {
      isClosed = true;
    },
  });
}
