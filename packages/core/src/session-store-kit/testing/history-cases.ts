import { expect, it } from 'vitest';
import type { JsonObject } from '../../json.js';
import { actor, type ConformanceStores, message, texts, write } from './conformance-stores.js';

/** A new session, then the messages written to it and the windows read back. */
export function sessionHistoryCases(stores: ConformanceStores): void {
  const { make, openSession } = stores;
  it('opens a session that does not exist yet as new and empty', async () => {
    const store = await make();
    const session = await openSession(store, 'new-session');
    expect(session.isNew).toBe(true);
    expect(session.id).toBe('new-session');
    expect(session.actor).toBe(actor);
    expect(session.state).toEqual({});
    expect(session.messageCount).toBe(0);
    expect(session.byteCount).toBe(0);
    expect(await session.history({ limit: 10 })).toEqual([]);
    await session.release();
  });

  it('keeps written messages, in order, with positions, operation ids, outcome and time', async () => {
    const store = await make();
    const before = Date.now();
    const session = await openSession(store, 'chat');
    const result = await session.write(
      write('run-1', [message('one'), message('two')], {
        outcome: 'completed',
        state: { topic: 'refunds' },
      }),
    );
    expect(result).toEqual({
      status: 'applied',
      messageCount: 2,
      byteCount: Buffer.byteLength(message('one')) + Buffer.byteLength(message('two')),
    });
    await session.write(write('append-1', [message('three')]));
    await session.release();

    const again = await openSession(store, 'chat');
    expect(again.isNew).toBe(false);
    expect(again.state).toEqual({ topic: 'refunds' });
    expect(again.messageCount).toBe(3);
    const records = await again.history({ limit: 10 });
    expect(records.map((record) => record.position)).toEqual([0, 1, 2]);
    expect(records.map((record) => record.message)).toEqual([
      message('one'),
      message('two'),
      message('three'),
    ]);
    expect(records.map((record) => record.operationId)).toEqual(['run-1', 'run-1', 'append-1']);
    expect(records.map((record) => record.outcome)).toEqual(['completed', 'completed', undefined]);
    for (const record of records) {
      expect(record.createdAt).toBeInstanceOf(Date);
      expect(record.createdAt.getTime()).toBeGreaterThanOrEqual(before - 1_000);
    }
    await again.release();
  });

  it('reads a window: the newest `limit` before `before`, oldest first', async () => {
    const store = await make();
    const session = await openSession(store, 'window');
    const all = Array.from({ length: 30 }, (_, index) => message(`m${index}`));
    await session.write(write('fill', all));
    expect(await texts(session, 5)).toEqual(all.slice(25));
    const page = await session.history({ limit: 5, before: 10 });
    expect(page.map((record) => record.position)).toEqual([5, 6, 7, 8, 9]);
    expect((await session.history({ limit: 50, before: 3 })).map((record) => record.position)).toEqual([
      0, 1, 2,
    ]);
    expect(await session.history({ limit: 5, before: 0 })).toEqual([]);
    await session.release();
  });
}

/** State and message text come back exactly as written. */
export function storedAsWrittenCases(stores: ConformanceStores): void {
  const { make, openSession } = stores;
  it('keeps the state as written, and leaves it alone when a write carries none', async () => {
    const store = await make();
    const state: JsonObject = {
      nested: { list: [1, 'two', null, true] },
      unicode: 'é 日本 🎉',
      empty: {},
    };
    const session = await openSession(store, 'state');
    await session.write(write('one', [message('a')], { state }));
    await session.write(write('two', [message('b')]));
    await session.release();
    const again = await openSession(store, 'state');
    expect(again.state).toEqual(state);
    (again.state as { nested: unknown }).nested = 'changed by the caller';
    await again.release();
    const third = await openSession(store, 'state');
    expect(third.state).toEqual(state);
    await third.release();
  });

  it('stores message text verbatim: any Unicode, and a message of 1 MiB', async () => {
    const store = await make();
    const odd = [
      message('quotes \' " ` and backslash \\ and % _ * ? and ; DROP TABLE x; --'),
      message('emoji 🎉 and astral 𝄞 and combining é and RTL مرحبا'),
      message('x'.repeat(1024 * 1024)),
    ];
    const session = await openSession(store, 'verbatim');
    await session.write(write('w', odd));
    await session.release();
    const again = await openSession(store, 'verbatim');
    expect(await texts(again)).toEqual(odd);
    await again.release();
  });
}
