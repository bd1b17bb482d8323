import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { SessionAccessError, SessionBusyError, SessionStoreError } from '../../session-errors.js';
import { actor, type ConformanceStores, message, otherActor, texts, write } from './conformance-stores.js';

/** One run at a time holds a session; the others wait, time out or give up. */
export function lockCases(stores: ConformanceStores): void {
  const { make, openSession } = stores;
  it('makes a second open wait for the first to release', async () => {
    const store = await make();
    const first = await openSession(store, 'serial');
    let secondOpened = false;
    const second = openSession(store, 'serial').then((session) => {
      secondOpened = true;
      return session;
    });
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(secondOpened).toBe(false);
    await first.write(write('first', [message('from the first run')]));
    await first.release();
    const opened = await second;
    expect(opened.messageCount).toBe(1);
    await opened.release();
  });

  it('fails a wait longer than lockTimeoutMs with SessionBusyError, and writes nothing', async () => {
    const store = await make();
    const first = await openSession(store, 'busy');
    const error = await store.open({ id: 'busy', actor, lockTimeoutMs: 200 }).catch((caught) => caught);
    expect(SessionBusyError.isInstance(error)).toBe(true);
    expect((error as SessionBusyError).reason).toBe('timeout');
    await first.release();
    const after = await openSession(store, 'busy');
    expect(after.messageCount).toBe(0);
    await after.release();
  });

  it('ends a wait when its signal aborts, with the signal reason', async () => {
    const store = await make();
    const first = await openSession(store, 'aborted');
    const controller = new AbortController();
    const waiting = store
      .open({ id: 'aborted', actor, lockTimeoutMs: 60_000, signal: controller.signal })
      .catch((caught) => caught);
    const reason = new Error('the caller gave up');
    setTimeout(() => controller.abort(reason), 50);
    expect(await waiting).toBe(reason);
    await first.release();
    const next = await openSession(store, 'aborted', actor, 1_000);
    await next.release();
  });

  it('refuses a write after release, writing nothing', async () => {
    const store = await make();
    const session = await openSession(store, 'released');
    await session.release();
    await session.release(); // twice is fine
    const error = await session.write(write('late', [message('late')])).catch((caught) => caught);
    expect(SessionBusyError.isInstance(error)).toBe(true);
    expect((error as SessionBusyError).reason).toBe('lock-lost');
    const again = await openSession(store, 'released');
    expect(again.messageCount).toBe(0);
    await again.release();
  });

  it('keeps each of ten concurrent runs together and in order, each exactly once', async () => {
    const store = await make();
    const runs = Array.from({ length: 10 }, (_, run) => run);
    await Promise.all(
      runs.map(async (run) => {
        const session = await openSession(store, 'crowd', actor, 30_000);
        try {
          const history = await session.history({ limit: 1000 });
          await session.write(
            write(`run-${run}`, [
              message(`run ${run} asks`),
              message(`run ${run} answers after ${history.length}`),
            ]),
          );
        } finally {
          await session.release();
        }
      }),
    );
    const session = await openSession(store, 'crowd');
    const records = await session.history({ limit: 1000 });
    await session.release();
    expect(records).toHaveLength(20);
    const seen = new Set<string>();
    for (let index = 0; index < records.length; index += 2) {
      const operation = records[index]?.operationId ?? '';
      expect(records[index + 1]?.operationId).toBe(operation);
      expect(seen.has(operation)).toBe(false);
      seen.add(operation);
      const run = operation.slice('run-'.length);
      expect(records[index]?.message).toBe(message(`run ${run} asks`));
      expect(records[index + 1]?.message).toBe(message(`run ${run} answers after ${index}`));
    }
  });
}

/** A closed store refuses to open sessions. */
export function closingCases(stores: ConformanceStores): void {
  const { make, openSession } = stores;
  it('refuses to open after close with a SessionStoreError, and closes twice safely', async () => {
    const store = await make();
    await store.close();
    await store.close();
    const error = await openSession(store, 'after-close').catch((caught) => caught);
    expect(SessionStoreError.isInstance(error)).toBe(true);
    expect((error as SessionStoreError).reason).toBe('closed');
  });
}

/** A second store over the same storage shares sessions and their locks. */
export function sharedStorageCases(stores: ConformanceStores): void {
  const { make, sibling, openSession } = stores;
  // A store whose suite gives no `sibling` (one process, in-memory storage) has no second view of its
  // storage to test; the enclosing describe's title says so.
  it.skipIf(!stores.hasSibling)(
    'shares sessions and their locks with a second store over the same storage',
    async () => {
      const store = await make();
      const other = await sibling(store);
      const id = `shared-${randomUUID()}`;
      const first = await openSession(store, id);
      await first.write(write('one', [message('from the first store')]));
      const busy = await other.open({ id, actor, lockTimeoutMs: 200 }).catch((caught) => caught);
      expect(SessionBusyError.isInstance(busy)).toBe(true);
      const waiting = openSession(other, id, actor, 10_000);
      await first.release();
      const second = await waiting;
      expect(await texts(second)).toEqual([message('from the first store')]);
      await second.write(write('two', [message('from the second store')]));
      await second.release();
      const back = await openSession(store, id);
      expect(await texts(back)).toEqual([message('from the first store'), message('from the second store')]);
      await back.release();
      const refused = await openSession(other, id, otherActor).catch((caught) => caught);
      expect(SessionAccessError.isInstance(refused)).toBe(true);
    },
  );
}
