import { expect, it } from 'vitest';
import { ConfigurationError } from '../../configuration-error.js';
import { SessionAccessError } from '../../session-errors.js';
import { actor, type ConformanceStores, message, otherActor, texts, write } from './conformance-stores.js';

/** A session belongs to the actor that created it; others learn nothing of it. */
export function ownerCases(stores: ConformanceStores): void {
  const { make, openSession } = stores;
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
}

/** Ids and actors are kept verbatim, and malformed ones are refused. */
export function idAndActorCases(stores: ConformanceStores): void {
  const { make, openSession } = stores;
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
}
