import { createHash, randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../canonical-json.js';
import { ConfigurationError } from '../../configuration-error.js';
import type { JsonObject } from '../../json.js';
import type { ModelMessage } from '../../model.js';
import {
  SessionAccessError,
  SessionBusyError,
  SessionConflictError,
  SessionLimitError,
  SessionStoreError,
} from '../../session-errors.js';
import { encodeSessionMessage } from '../../session-message-codec.js';
import type {
  OpenedSessionV1,
  SessionLimits,
  SessionStoreV1,
  SessionTurnOutcome,
  SessionWrite,
} from '../../session-store.js';

/** What {@link describeSessionStoreConformance} takes besides the store factory. */
export interface SessionStoreConformanceOptions {
  /** The name the suite's `describe` block shows. Default: the first store's name. */
  readonly name?: string;
  /**
   * Opens a second store over the same storage as `store` (another connection, as a second process
   * would have): the suite then checks that locks and data are shared. Without it those cases skip,
   * saying why (a store in memory has no second view of its storage).
   */
  readonly openSibling?: (store: SessionStoreV1) => Promise<SessionStoreV1>;
}

/**
 * Makes a store for one test: empty, with the given limits over the defaults. The suite closes every
 * store it is given.
 */
export type CreateSessionStore = (options: {
  readonly limits?: Partial<SessionLimits>;
}) => Promise<SessionStoreV1>;

const actor = 'actor-1';
const otherActor = 'actor-2';

function message(text: string): string {
  const user: ModelMessage = { role: 'user', content: text };
  return encodeSessionMessage(user);
}

function write(
  operationId: string,
  messages: readonly string[],
  extra: {
    state?: JsonObject;
    outcome?: SessionTurnOutcome;
    replaceFrom?: NonNullable<SessionWrite['replaceFrom']>;
    pause?: string | null;
  } = {},
): SessionWrite {
  const content = { messages, ...extra };
  return {
    operationId,
    digest: createHash('sha256').update(canonicalJson(content)).digest('hex'),
    ...content,
  };
}

/** A paused run as Ghost might write it: JSON text the store keeps without reading. */
function pausedRun(runId: string, note = 'waiting for approval'): string {
  return JSON.stringify({
    runId,
    note,
    calls: [{ id: `${runId}-call`, tool: 'refund', input: { amount: 42 } }],
  });
}

async function texts(session: OpenedSessionV1, limit = 1000): Promise<string[]> {
  return (await session.history({ limit })).map((record) => record.message);
}

/**
 * The suite every session store runs: a store passes when every case passes. It uses only the
 * `SessionStoreV1` contract, so it runs the same against memory, SQLite, PostgreSQL and your own.
 * Call it at the top level of a test file.
 *
 * @example
 * ```ts
 * import { describeSessionStoreConformance } from '@ghost/core/session-store/testing';
 *
 * describeSessionStoreConformance(async ({ limits }) => myStore({ url: await freshDatabase(), limits }));
 * ```
 */
export function describeSessionStoreConformance(
  createStore: CreateSessionStore,
  options: SessionStoreConformanceOptions = {},
): void {
  const opened: SessionStoreV1[] = [];
  const make = async (limits?: Partial<SessionLimits>) => {
    const store = await createStore(limits === undefined ? {} : { limits });
    opened.push(store);
    return store;
  };
  const sibling = async (store: SessionStoreV1) => {
    if (options.openSibling === undefined) throw new Error('no sibling');
    const other = await options.openSibling(store);
    opened.push(other);
    return other;
  };
  const siblingSkip =
    options.openSibling === undefined
      ? ' (skipped: this store has no second view of its storage, openSibling not given)'
      : '';
  const openSession = (store: SessionStoreV1, id: string, who = actor, lockTimeoutMs = 5_000) =>
    store.open({ id, actor: who, lockTimeoutMs });

  afterEach(async () => {
    const stores = opened.splice(0);
    for (const store of stores.reverse()) await store.close();
  });

  describe(`session store conformance${options.name === undefined ? '' : `: ${options.name}`}`, () => {
    describe('sessions and their history', () => {
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
    });

    describe('idempotent and conditional writes', () => {
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
    });

    describe('limits, checked before anything is written', () => {
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
    });

    describe('paused runs', () => {
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

      it.skipIf(options.openSibling === undefined)(
        `shares a paused run with a second store over the same storage${siblingSkip}`,
        async () => {
          const store = await make();
          const other = await sibling(store);
          const id = `paused-${randomUUID()}`;
          const first = await openSession(store, id);
          await first.write(write('run-1', [message('ask')], { pause: pausedRun('run-1') }));
          await first.release();
          expect((await other.list({ actor })).sessions.map((summary) => summary.hasPausedRun)).toEqual([
            true,
          ]);
          const second = await openSession(other, id);
          expect(second.pause).toBe(pausedRun('run-1'));
          await second.write(write('run-1-resumed', [message('done')], { pause: null }));
          await second.release();
          const back = await openSession(store, id);
          expect(back.pause).toBeUndefined();
          await back.release();
          expect((await store.list({ actor })).sessions.map((summary) => summary.hasPausedRun)).toEqual([
            false,
          ]);
        },
      );
    });

    describe('owners', () => {
      it('refuses another actor, saying nothing of the session', async () => {
        const store = await make();
        const session = await openSession(store, 'private', actor);
        await session.write(write('w', [message('secret plans')], { state: { card: '4242' } }));
        await session.release();
        const error = await openSession(store, 'private', otherActor).catch((caught) => caught);
        expect(SessionAccessError.isInstance(error)).toBe(true);
        const said = JSON.stringify({ message: (error as Error).message, ...(error as object) });
        for (const secret of [actor, 'secret', '4242', 'private']) expect(said).not.toContain(secret);
      });

      it('refuses another actor at once, even while a run holds the session', async () => {
        const store = await make();
        const held = await openSession(store, 'held', actor);
        await held.write(write('w', [message('a')]));
        const error = await store
          .open({ id: 'held', actor: otherActor, lockTimeoutMs: 60_000 })
          .catch((caught) => caught);
        expect(SessionAccessError.isInstance(error)).toBe(true);
        await held.release();
      });

      it('refuses the second of two actors that open a new id at once', async () => {
        const store = await make();
        const first = await openSession(store, 'race', actor);
        const second = openSession(store, 'race', otherActor).catch((caught) => caught);
        await first.write(write('w', [message('mine')]));
        await first.release();
        expect(SessionAccessError.isInstance(await second)).toBe(true);
      });

      it("lists only the actor's sessions, and deletes only its own", async () => {
        const store = await make();
        for (const [id, who] of [
          ['a1', actor],
          ['b1', otherActor],
        ] as const) {
          const session = await openSession(store, id, who);
          await session.write(write('w', [message(id)]));
          await session.release();
        }
        expect((await store.list({ actor })).sessions.map((summary) => summary.id)).toEqual(['a1']);
        expect(await store.delete({ id: 'b1', actor })).toBe(false);
        expect(await store.delete({ id: 'missing', actor })).toBe(false);
        const still = await openSession(store, 'b1', otherActor);
        expect(await texts(still)).toEqual([message('b1')]);
        await still.release();
      });
    });

    describe('ids and actors', () => {
      const verbatim = [
        `it's "quoted"`,
        '100% _wild_ *card* [x]',
        "'; DROP TABLE sessions; --",
        'ünïcödé 日本語 🎉',
        'back\\slash',
        'a'.repeat(256),
      ];
      it('stores ids and actors with quotes, %, _ and Unicode verbatim, never interpreted', async () => {
        const store = await make();
        for (const [index, id] of verbatim.entries()) {
          const who = verbatim[(index + 1) % verbatim.length] ?? actor;
          const session = await openSession(store, id, who);
          await session.write(write('w', [message(id)]));
          await session.release();
        }
        for (const [index, id] of verbatim.entries()) {
          const who = verbatim[(index + 1) % verbatim.length] ?? actor;
          const session = await openSession(store, id, who);
          expect(session.id).toBe(id);
          expect(session.actor).toBe(who);
          expect(await texts(session)).toEqual([message(id)]);
          await session.release();
          const listed = await store.list({ actor: who });
          expect(listed.sessions.map((summary) => summary.id)).toEqual([id]);
        }
        // `%` and `_` match nothing but themselves: no LIKE pattern anywhere.
        expect((await store.list({ actor: '100% _wild_ *card* [x]' })).sessions).toHaveLength(1);
        expect((await store.list({ actor: '100%' })).sessions).toHaveLength(0);
      });

      it('refuses NUL, control characters, empty and over-long ids and actors with a ConfigurationError', async () => {
        const store = await make();
        const bad = ['', 'nul\u0000inside', 'line\nbreak', 'x'.repeat(10 * 1024), 'lone \uD800 surrogate'];
        for (const value of bad) {
          for (const request of [
            { id: value, actor },
            { id: 'fine', actor: value },
          ]) {
            const error = await store.open({ ...request, lockTimeoutMs: 100 }).catch((caught) => caught);
            expect(ConfigurationError.isInstance(error), JSON.stringify(request).slice(0, 80)).toBe(true);
          }
          const listed = await store.list({ actor: value }).catch((caught) => caught);
          expect(ConfigurationError.isInstance(listed)).toBe(true);
          const deleted = await store.delete({ id: value, actor }).catch((caught) => caught);
          expect(ConfigurationError.isInstance(deleted)).toBe(true);
        }
        expect((await store.list({ actor })).sessions).toEqual([]);
      });
    });

    describe('one run at a time', () => {
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
    });

    describe('list, delete and prune', () => {
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
        const error = await store
          .delete({ id: 'in-use', actor, lockTimeoutMs: 150 })
          .catch((caught) => caught);
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
    });

    describe('closing', () => {
      it('refuses to open after close with a SessionStoreError, and closes twice safely', async () => {
        const store = await make();
        await store.close();
        await store.close();
        const error = await openSession(store, 'after-close').catch((caught) => caught);
        expect(SessionStoreError.isInstance(error)).toBe(true);
        expect((error as SessionStoreError).reason).toBe('closed');
      });
    });

    describe(`shared storage${siblingSkip}`, () => {
      it.skipIf(options.openSibling === undefined)(
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
          expect(await texts(back)).toEqual([
            message('from the first store'),
            message('from the second store'),
          ]);
          await back.release();
          const refused = await openSession(other, id, otherActor).catch((caught) => caught);
          expect(SessionAccessError.isInstance(refused)).toBe(true);
        },
      );
    });
  });
}
