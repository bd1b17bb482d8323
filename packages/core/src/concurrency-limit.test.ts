import { describe, expect, it } from 'vitest';
import { ConcurrencyLimit } from './concurrency-limit.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('ConcurrencyLimit', () => {
  it('never runs more than its limit at once and runs every task', async () => {
    const limit = new ConcurrencyLimit(3);
    let running = 0;
    let peak = 0;
    const results = await Promise.all(
      Array.from({ length: 10 }, (_unused, index) =>
        limit.run(async () => {
          running += 1;
          peak = Math.max(peak, running);
          await tick();
          running -= 1;
          return index;
        }),
      ),
    );
    expect(peak).toBe(3);
    expect(results).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(limit.running).toBe(0);
  });

  it('starts queued tasks in the order they were queued', async () => {
    const limit = new ConcurrencyLimit(1);
    const started: number[] = [];
    await Promise.all(
      [0, 1, 2, 3].map((index) =>
        limit.run(async () => {
          started.push(index);
          await tick();
        }),
      ),
    );
    expect(started).toEqual([0, 1, 2, 3]);
  });

  it('frees its place when a task rejects', async () => {
    const limit = new ConcurrencyLimit(1);
    await expect(limit.run(() => Promise.reject(new Error('tool failed')))).rejects.toThrow('tool failed');
    expect(limit.running).toBe(0);
    await expect(limit.run(async () => 'next')).resolves.toBe('next');
  });

  it('startAllWaiting starts queued tasks without waiting for the running one, and the count returns to zero', async () => {
    const limit = new ConcurrencyLimit(1);
    let finishFirst: () => void = () => {};
    const first = limit.run(() => new Promise<string>((resolve) => (finishFirst = () => resolve('first'))));
    const queued = [limit.run(async () => 'second'), limit.run(async () => 'third')];
    await tick();
    expect(limit.running).toBe(1);
    limit.startAllWaiting();
    await expect(Promise.all(queued)).resolves.toEqual(['second', 'third']);
    finishFirst();
    await expect(first).resolves.toBe('first');
    expect(limit.running).toBe(0);
  });
});
