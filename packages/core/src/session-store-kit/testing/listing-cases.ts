import { expect, it } from 'vitest';
import { ConfigurationError } from '../../configuration-error.js';
import { SessionBusyError } from '../../session-errors.js';
import { actor, type ConformanceStores, message, write } from './conformance-stores.js';

/** Listing an actor's sessions a page at a time, and refusing a malformed request. */
export function listingCases(stores: ConformanceStores): void {
  const { make, openSession } = stores;
  it('lists newest first, a page at a time, with a cursor', async () => {
    const store = await make();
    const ids = Array.from({ length: 7 }, (_, index) => `s${index}`);
    for (const id of ids) {
      const session = await openSession(store, id);
      await session.write(write('w', [message(id), message('again')]));
      await session.release();
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await store.list({ actor, limit: 3, ...(cursor === undefined ? {} : { cursor }) });
      expect(page.sessions.length).toBeLessThanOrEqual(3);
      for (const summary of page.sessions) {
        expect(summary.actor).toBe(actor);
        expect(summary.messageCount).toBe(2);
        expect(summary.byteCount).toBe(
          Buffer.byteLength(message(summary.id)) + Buffer.byteLength(message('again')),
        );
        expect(summary.createdAt).toBeInstanceOf(Date);
        expect(summary.updatedAt.getTime()).toBeGreaterThanOrEqual(summary.createdAt.getTime());
      }
      seen.push(...page.sessions.map((summary) => summary.id));
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor !== undefined && pages < 10);
    expect(seen).toEqual([...ids].reverse());
    expect(pages).toBe(3);
    expect((await store.list({ actor })).sessions).toHaveLength(7);
  });

  it('refuses a malformed list request with a ConfigurationError', async () => {
    const store = await make();
    for (const request of [
      { actor, limit: 0 },
      { actor, limit: 101 },
      { actor, limit: 1.5 },
      { actor, cursor: 'not a cursor' },
      { actor, cursor: 'x'.repeat(2000) },
    ]) {
      const error = await store.list(request).catch((caught) => caught);
      expect(ConfigurationError.isInstance(error), JSON.stringify(request).slice(0, 60)).toBe(true);
    }
  });
}

/** Deleting a session with all it holds, once no run holds it, and pruning the old ones no run holds. */
export function removalCases(stores: ConformanceStores): void {
  const { make, openSession } = stores;
  it('deletes a session with everything it holds; the id then opens as new', async () => {
    const store = await make();
    const session = await openSession(store, 'doomed');
    await session.write(write('op', [message('a')], { state: { x: 1 } }));
    await session.release();
    expect(await store.delete({ id: 'doomed', actor })).toBe(true);
    expect(await store.delete({ id: 'doomed', actor })).toBe(false);
    const again = await openSession(store, 'doomed');
    expect(again.isNew).toBe(true);
    expect(again.state).toEqual({});
    expect(again.messageCount).toBe(0);
    // The operation ids went with it: the same id applies again.
    expect((await again.write(write('op', [message('b')]))).status).toBe('applied');
    await again.release();
    expect((await store.list({ actor })).sessions.map((summary) => summary.id)).toEqual(['doomed']);
  });

  it('makes delete wait for a run holding the session', async () => {
    const store = await make();
    const session = await openSession(store, 'in-use');
    await session.write(write('op', [message('a')]));
    const error = await store.delete({ id: 'in-use', actor, lockTimeoutMs: 150 }).catch((caught) => caught);
    expect(SessionBusyError.isInstance(error)).toBe(true);
    const deleting = store.delete({ id: 'in-use', actor, lockTimeoutMs: 10_000 });
    await session.write(write('op2', [message('b')]));
    await session.release();
    expect(await deleting).toBe(true);
  });

  it('prunes sessions last written before the cutoff, not newer ones or ones in use', async () => {
    const store = await make();
    for (const id of ['old-1', 'old-2', 'old-held']) {
      const session = await openSession(store, id);
      await session.write(write('w', [message(id)]));
      await session.release();
    }
    await new Promise((resolve) => setTimeout(resolve, 30));
    const cutoff = new Date();
    await new Promise((resolve) => setTimeout(resolve, 30));
    const fresh = await openSession(store, 'fresh');
    await fresh.write(write('w', [message('fresh')]));
    await fresh.release();
    const held = await openSession(store, 'old-held');
    expect(await store.prune({ olderThan: cutoff })).toBe(2);
    await held.release();
    const left = (await store.list({ actor })).sessions.map((summary) => summary.id).sort();
    expect(left).toEqual(['fresh', 'old-held']);
    const error = await store.prune({ olderThan: new Date(Number.NaN) }).catch((caught) => caught);
    expect(ConfigurationError.isInstance(error)).toBe(true);
  });
}
