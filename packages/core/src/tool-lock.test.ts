import { describe, expect, it } from 'vitest';
import { ToolLock } from './tool-lock.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('ToolLock', () => {
  it('lets shared holders overlap and gives an exclusive holder the lock alone, in arrival order', async () => {
    const lock = new ToolLock();
    const events: string[] = [];
    const releaseA = await lock.acquire(false);
    const releaseB = await lock.acquire(false);
    const exclusive = lock.acquire(true).then((release) => {
      events.push('exclusive');
      return release;
    });
    const lateShared = lock.acquire(false).then((release) => {
      events.push('late shared');
      return release;
    });
    await tick();
    expect(events).toEqual([]); // the exclusive waits for A and B; the late shared call waits behind it
    releaseA();
    releaseB();
    const releaseExclusive = await exclusive;
    await tick();
    expect(events).toEqual(['exclusive']);
    releaseExclusive();
    (await lateShared)();
    expect(events).toEqual(['exclusive', 'late shared']);
  });

  it('ignores a second release', async () => {
    const lock = new ToolLock();
    const release = await lock.acquire(true);
    release();
    release();
    const again = await lock.acquire(true);
    again();
  });
});
