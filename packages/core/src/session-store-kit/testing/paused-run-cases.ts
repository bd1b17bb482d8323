import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { SessionConflictError, SessionLimitError } from '../../session-errors.js';
import { actor, type ConformanceStores, message, pausedRun, texts, write } from './conformance-stores.js';

/** A paused run is kept with the session, and written with its messages or not at all. */
export function pausedRunWriteCases(stores: ConformanceStores): void {
  const { make, openSession } = stores;
  it('keeps a paused run with the session: a later write without one leaves it, null removes it', async () => {
    const store = await make();
    const session = await openSession(store, 'paused');
    expect(session.pause).toBeUndefined();
    await session.write(write('run-1', [message('refund me')], { pause: pausedRun('run-1') }));
    expect(session.pause).toBe(pausedRun('run-1'));
    await session.release();

    const again = await openSession(store, 'paused');
    expect(again.pause).toBe(pausedRun('run-1'));
    await again.write(write('append-1', [message('while it waits')], { state: { n: 1 } }));
    expect(again.pause).toBe(pausedRun('run-1'));
    await again.release();

    const third = await openSession(store, 'paused');
    expect(third.pause).toBe(pausedRun('run-1'));
    expect(third.state).toEqual({ n: 1 });
    await third.write(write('run-1-resumed', [message('refunded')], { pause: null }));
    expect(third.pause).toBeUndefined();
    expect(await texts(third)).toEqual([
      message('refund me'),
      message('while it waits'),
      message('refunded'),
    ]);
    await third.release();

    const fourth = await openSession(store, 'paused');
    expect(fourth.pause).toBeUndefined();
    await fourth.write(write('run-2', [], { pause: pausedRun('run-2') })); // a pause alone is a write too
    expect(fourth.messageCount).toBe(3);
    await fourth.release();
    const fifth = await openSession(store, 'paused');
    expect(fifth.pause).toBe(pausedRun('run-2'));
    await fifth.release();
  });

  it('applies a paused run with the messages or not at all: a refused write leaves the old one', async () => {
    const store = await make({ maxMessages: 3 });
    const session = await openSession(store, 'atomic-pause');
    await session.write(write('run-1', [message('a'), message('b')], { pause: pausedRun('run-1') }));
    const tooMany = await session
      .write(write('run-2', [message('c'), message('d')], { pause: pausedRun('run-2') }))
      .catch((caught) => caught);
    expect(SessionLimitError.isInstance(tooMany)).toBe(true);
    expect((tooMany as SessionLimitError).limit).toBe('maxMessages');
    const moved = await session
      .write(
        write('run-3', [message('x')], {
          replaceFrom: { position: 0, expected: [message('not a')] },
          pause: null,
        }),
      )
      .catch((caught) => caught);
    expect(SessionConflictError.isInstance(moved)).toBe(true);
    expect((moved as SessionConflictError).reason).toBe('tail-moved');
    expect(session.pause).toBe(pausedRun('run-1'));
    expect(await texts(session)).toEqual([message('a'), message('b')]);
    await session.release();
    const again = await openSession(store, 'atomic-pause');
    expect(again.pause).toBe(pausedRun('run-1'));
    expect(again.messageCount).toBe(2);
    await again.release();
  });
}

/** A paused run applies once, within maxPauseBytes, and comes back verbatim. */
export function pausedRunIntegrityCases(stores: ConformanceStores): void {
  const { make, openSession } = stores;
  it('applies an operation id with a paused run once: the same write again changes nothing', async () => {
    const store = await make();
    const session = await openSession(store, 'pause-once');
    const paused = write('run-1', [message('ask')], { pause: pausedRun('run-1') });
    expect((await session.write(paused)).status).toBe('applied');
    await session.write(write('run-1-resumed', [message('done')], { pause: null }));
    expect((await session.write(paused)).status).toBe('already-applied');
    expect(session.pause).toBeUndefined();
    await session.release();
    const again = await openSession(store, 'pause-once');
    expect((await again.write(paused)).status).toBe('already-applied');
    expect(again.pause).toBeUndefined();
    expect(await texts(again)).toEqual([message('ask'), message('done')]);
    const reused = await again
      .write(write('run-1', [message('ask')], { pause: pausedRun('run-1', 'other content') }))
      .catch((caught) => caught);
    expect(SessionConflictError.isInstance(reused)).toBe(true);
    expect((reused as SessionConflictError).reason).toBe('operation-reused');
    expect(again.pause).toBeUndefined();
    await again.release();
    const third = await openSession(store, 'pause-once');
    expect(third.pause).toBeUndefined();
    await third.release();
  });

  it('refuses a paused run over maxPauseBytes, counted in UTF-8 bytes, writing nothing', async () => {
    const store = await make({ maxPauseBytes: 100 });
    expect(store.limits.maxPauseBytes).toBe(100);
    const session = await openSession(store, 'pause-limit');
    await session.write(write('first', [message('a')], { pause: '🎉'.repeat(25) })); // 100 bytes: fits
    const error = await session
      .write(write('second', [message('b')], { pause: '🎉'.repeat(26), state: { v: 2 } }))
      .catch((caught) => caught);
    expect(SessionLimitError.isInstance(error)).toBe(true);
    expect((error as SessionLimitError).limit).toBe('maxPauseBytes');
    expect((error as SessionLimitError).size).toBe(104);
    expect((error as SessionLimitError).max).toBe(100);
    expect((error as SessionLimitError).sessionId).toBe('pause-limit');
    expect((error as Error).message).toContain('maxPauseBytes');
    expect(session.pause).toBe('🎉'.repeat(25));
    expect(await texts(session)).toEqual([message('a')]);
    await session.release();
    const again = await openSession(store, 'pause-limit');
    expect(again.pause).toBe('🎉'.repeat(25));
    expect(again.state).toEqual({});
    expect(again.messageCount).toBe(1);
    // Nothing of the refused write was kept, its operation id either.
    expect((await again.write(write('second', [message('b')]))).status).toBe('applied');
    await again.release();
  });

  it('keeps a paused run verbatim: any Unicode, escapes, and 1 MiB', async () => {
    const store = await make();
    const odd = JSON.stringify({
      text: 'emoji 🎉 astral 𝄞 combining é RTL مرحبا 日本語',
      escapes: 'quotes \' " ` backslash \\ NUL \u0000 newline \n; DROP TABLE x; --',
      big: 'x'.repeat(1024 * 1024),
    });
    const session = await openSession(store, 'pause-verbatim');
    await session.write(write('w', [message('a')], { pause: odd }));
    await session.release();
    const again = await openSession(store, 'pause-verbatim');
    expect(again.pause).toBe(odd);
    await again.release();
  });
}

/** A paused run shows in list, goes with its session, and is shared with a sibling store. */
export function pausedRunSessionCases(stores: ConformanceStores): void {
  const { make, sibling, openSession, siblingSkip } = stores;
  it('shows in list which sessions keep a paused run', async () => {
    const store = await make();
    for (const [id, pause] of [
      ['waiting', pausedRun('run-1')],
      ['idle', undefined],
      ['resumed', pausedRun('run-2')],
    ] as const) {
      const session = await openSession(store, id);
      await session.write(write('w', [message(id)], pause === undefined ? {} : { pause }));
      await session.release();
    }
    const resumed = await openSession(store, 'resumed');
    await resumed.write(write('done', [message('done')], { pause: null }));
    await resumed.release();
    const listed = (await store.list({ actor })).sessions;
    expect(listed.map((summary) => [summary.id, summary.hasPausedRun])).toEqual([
      ['resumed', false],
      ['idle', false],
      ['waiting', true],
    ]);
  });

  it('deletes a paused run with its session', async () => {
    const store = await make();
    const session = await openSession(store, 'paused-then-deleted');
    await session.write(write('w', [message('a')], { pause: pausedRun('run-1') }));
    await session.release();
    expect(await store.delete({ id: 'paused-then-deleted', actor })).toBe(true);
    const again = await openSession(store, 'paused-then-deleted');
    expect(again.isNew).toBe(true);
    expect(again.pause).toBeUndefined();
    await again.release();
  });

  // Only a store with a second view of its storage (`sibling`) can share a pause; the title says so.
  it.skipIf(!stores.hasSibling)(
    `shares a paused run with a second store over the same storage${siblingSkip}`,
    async () => {
      const store = await make();
      const other = await sibling(store);
      const id = `paused-${randomUUID()}`;
      const first = await openSession(store, id);
      await first.write(write('run-1', [message('ask')], { pause: pausedRun('run-1') }));
      await first.release();
      expect((await other.list({ actor })).sessions.map((summary) => summary.hasPausedRun)).toEqual([true]);
      const second = await openSession(other, id);
      expect(second.pause).toBe(pausedRun('run-1'));
      await second.write(write('run-1-resumed', [message('done')], { pause: null }));
      await second.release();
      const back = await openSession(store, id);
      expect(back.pause).toBeUndefined();
      await back.release();
      expect((await store.list({ actor })).sessions.map((summary) => summary.hasPausedRun)).toEqual([false]);
    },
  );
}
