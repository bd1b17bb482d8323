import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { countOpenHandles, newOpenHandles } from './open-handles.js';

describe('newOpenHandles', () => {
  it('reports a timer left running, with where it was made', async () => {
    const before = countOpenHandles();
    const timer = setTimeout(() => {}, 60_000);
    try {
      const extra = await newOpenHandles(before);
      expect(extra).toHaveLength(1);
      expect(extra[0]).toMatch(/^Timeout \(made at .*open-handles\.test\.ts:\d+:\d+\)$/);
    } finally {
      clearTimeout(timer);
    }
  });

  it('does not report a timer that was cleared, that fired, or that does not keep the process alive', async () => {
    const before = countOpenHandles();
    clearTimeout(setTimeout(() => {}, 60_000));
    await new Promise((resolve) => setTimeout(resolve, 1));
    const unreferenced = setTimeout(() => {}, 60_000).unref();
    try {
      expect(await newOpenHandles(before)).toEqual([]);
    } finally {
      clearTimeout(unreferenced);
    }
  });

  it('does not report a timer that was already running at the first count', async () => {
    const earlier = setInterval(() => {}, 60_000);
    try {
      const before = countOpenHandles();
      expect(await newOpenHandles(before)).toEqual([]);
    } finally {
      clearInterval(earlier);
    }
  });

  it('reports other handles by kind, such as a listening server', async () => {
    const before = countOpenHandles();
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      expect(await newOpenHandles(before)).toEqual(['TCPServerWrap']);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    expect(await newOpenHandles(before)).toEqual([]);
  });
});
