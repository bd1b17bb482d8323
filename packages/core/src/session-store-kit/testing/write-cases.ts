import { expect, it } from 'vitest';
import { SessionConflictError, SessionLimitError } from '../../session-errors.js';
import type { SessionLimits, SessionWrite } from '../../session-store.js';
import { type ConformanceStores, message, pausedRun, texts, write } from './conformance-stores.js';

/** Operation ids apply once; a replace applies only over the tail the caller expects. */
export function conditionalWriteCases(stores: ConformanceStores): void {
  const { make, openSession } = stores;
  it('applies an operation id once: the same content again writes nothing', async () => {
    const store = await make();
    const session = await openSession(store, 'idempotent');
    const turn = write('run-7', [message('hello'), message('hi')], { state: { n: 1 } });
    expect((await session.write(turn)).status).toBe('applied');
    const repeated = await session.write(turn);
    expect(repeated).toEqual({
      status: 'already-applied',
      messageCount: 2,
      byteCount: session.byteCount,
    });
    expect(await texts(session)).toEqual([message('hello'), message('hi')]);
    await session.release();
    const again = await openSession(store, 'idempotent');
    expect((await again.write(turn)).status).toBe('already-applied');
    expect(again.messageCount).toBe(2);
    await again.release();
  });

  it('refuses an operation id reused with other content, changing nothing', async () => {
    const store = await make();
    const session = await openSession(store, 'reused');
    await session.write(write('op', [message('first')], { state: { v: 1 } }));
    const error = await session
      .write(write('op', [message('second')], { state: { v: 2 } }))
      .catch((caught) => caught);
    expect(SessionConflictError.isInstance(error)).toBe(true);
    expect((error as SessionConflictError).reason).toBe('operation-reused');
    expect(await texts(session)).toEqual([message('first')]);
    await session.release();
    const again = await openSession(store, 'reused');
    expect(again.state).toEqual({ v: 1 });
    await again.release();
  });

  it('replaces the tail when it is still what the caller expects', async () => {
    const store = await make();
    const session = await openSession(store, 'replace');
    await session.write(write('fill', [message('a'), message('b'), message('c')]));
    const result = await session.write(
      write('compact', [message('summary of b and c')], {
        replaceFrom: { position: 1, expected: [message('b'), message('c')] },
      }),
    );
    expect(result.status).toBe('applied');
    expect(result.messageCount).toBe(2);
    expect(result.byteCount).toBe(
      Buffer.byteLength(message('a')) + Buffer.byteLength(message('summary of b and c')),
    );
    const records = await session.history({ limit: 10 });
    expect(records.map((record) => [record.position, record.message])).toEqual([
      [0, message('a')],
      [1, message('summary of b and c')],
    ]);
    await session.write(write('after', [message('d')]));
    expect((await session.history({ limit: 10 })).map((record) => record.position)).toEqual([0, 1, 2]);
    await session.release();
  });

  it('refuses a replace whose expected tail moved, changing nothing', async () => {
    const store = await make();
    const session = await openSession(store, 'moved');
    await session.write(write('fill', [message('a'), message('b'), message('c')]));
    const attempts: NonNullable<SessionWrite['replaceFrom']>[] = [
      { position: 1, expected: [message('b')] }, // not the whole tail
      { position: 1, expected: [message('b'), message('changed')] }, // other content
      { position: 2, expected: [message('c'), message('d')] }, // longer than the history
      { position: 5, expected: [] }, // past the end
    ];
    for (const [index, replaceFrom] of attempts.entries()) {
      const error = await session
        .write(write(`attempt-${index}`, [message('x')], { replaceFrom }))
        .catch((caught) => caught);
      expect(SessionConflictError.isInstance(error), `attempt ${index}`).toBe(true);
      expect((error as SessionConflictError).reason).toBe('tail-moved');
    }
    expect(await texts(session)).toEqual([message('a'), message('b'), message('c')]);
    expect(session.messageCount).toBe(3);
    await session.release();
  });
}

/** Each of the store's limits refuses a write over it before anything is written. */
export function limitCases(stores: ConformanceStores): void {
  const { make, openSession } = stores;
  const cases: {
    limit: keyof SessionLimits;
    limits: Partial<SessionLimits>;
    make: () => SessionWrite;
  }[] = [
    {
      limit: 'maxMessages',
      limits: { maxMessages: 3 },
      make: () => write('w', [message('c'), message('d')]),
    },
    {
      limit: 'maxMessageBytes',
      limits: { maxMessageBytes: 100 },
      make: () => write('w', [message('short'), message('y'.repeat(200))]),
    },
    {
      limit: 'maxSessionBytes',
      limits: { maxSessionBytes: 100 },
      make: () => write('w', [message('z'.repeat(60))]),
    },
    {
      limit: 'maxStateBytes',
      limits: { maxStateBytes: 50 },
      make: () => write('w', [message('c')], { state: { big: 'q'.repeat(100) } }),
    },
    {
      limit: 'maxPauseBytes',
      limits: { maxPauseBytes: 50 },
      make: () => write('w', [message('c')], { pause: pausedRun('r'.repeat(100)) }),
    },
  ];
  for (const { limit, limits, make: makeWrite } of cases) {
    it(`refuses a write over ${limit} with a SessionLimitError naming it`, async () => {
      const store = await make(limits);
      expect(store.limits[limit]).toBe(limits[limit]);
      const session = await openSession(store, `limit-${limit}`);
      await session.write(write('first', [message('a'), message('b')], { state: { ok: true } }));
      const error = await session.write(makeWrite()).catch((caught) => caught);
      expect(SessionLimitError.isInstance(error)).toBe(true);
      expect((error as SessionLimitError).limit).toBe(limit);
      expect((error as SessionLimitError).size).toBeGreaterThan((error as SessionLimitError).max);
      expect((error as Error).message).toContain(limit);
      expect(await texts(session)).toEqual([message('a'), message('b')]);
      await session.release();
      const again = await openSession(store, `limit-${limit}`);
      expect(again.state).toEqual({ ok: true });
      expect(again.messageCount).toBe(2);
      await again.release();
    });
  }
}
