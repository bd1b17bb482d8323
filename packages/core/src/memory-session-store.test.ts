import { describe, expect, it } from 'vitest';
import { memorySessionStore } from './memory-session-store.js';
import { PluginInvalidError } from './plugin-errors.js';
import { describeSessionStoreConformance } from './session-store-kit/testing/session-store-conformance.js';

describeSessionStoreConformance(
  async ({ limits }) => memorySessionStore(limits === undefined ? {} : { limits }),
  {
    name: 'memory',
  },
);

describe('memorySessionStore', () => {
  it('refuses limits that are not whole numbers of at least 1, naming the limit', () => {
    expect(() => memorySessionStore({ limits: { maxMessages: 0 } })).toThrow(PluginInvalidError);
    expect(() => memorySessionStore({ limits: { maxSessionBytes: 1.5 } })).toThrow(/limits\.maxSessionBytes/);
    expect(() => memorySessionStore({ limits: { maxPauseBytes: 0 } })).toThrow(/limits\.maxPauseBytes/);
  });

  it('keeps a paused run of up to 16 MiB unless given another limit', () => {
    expect(memorySessionStore().limits.maxPauseBytes).toBe(16 * 1024 * 1024);
  });

  it('forgets the lock of a session nobody holds or waits for', async () => {
    const store = memorySessionStore();
    for (let index = 0; index < 1000; index += 1) {
      const session = await store.open({ id: `s${index}`, actor: 'a', lockTimeoutMs: 10 });
      await session.release();
    }
    // No session was written, so none exists; and a fresh open is immediate (no stale lock).
    expect((await store.list({ actor: 'a' })).sessions).toEqual([]);
    const again = await store.open({ id: 's0', actor: 'a', lockTimeoutMs: 0 });
    await again.release();
  });
});
