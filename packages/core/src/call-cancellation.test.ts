import { describe, expect, it } from 'vitest';
import { CallCancellation, subscribeToAbort } from './call-cancellation.js';

describe('CallCancellation', () => {
  it('ends every waiting call when their shared signal aborts, with its reason', async () => {
    const run = new AbortController();
    const calls = Array.from({ length: 100 }, () => new CallCancellation([run.signal]));
    const waits = calls.map((call) => call.race(new Promise<never>(() => {})));
    const signals = calls.slice(0, 50).map((call) => call.signal);
    run.abort(new Error('run stopped'));
    for (const outcome of await Promise.allSettled(waits)) {
      expect(outcome).toMatchObject({ status: 'rejected', reason: { message: 'run stopped' } });
    }
    expect(signals.every((signal) => signal.aborted && signal.reason.message === 'run stopped')).toBe(true);
    for (const call of calls) call.dispose();
  });

  it('adds one abort listener to a signal however many calls wait on it, so Node warns of no leak', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const run = new AbortController();
      const calls = Array.from({ length: 64 }, () => new CallCancellation([run.signal]));
      await new Promise((resolve) => setImmediate(resolve));
      for (const call of calls) call.dispose();
      expect(warnings.filter((warning) => warning.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('gives a tool an already aborted signal when it asks after the call was cancelled', () => {
    const call = new CallCancellation([]);
    call.cancel(new Error('timed out'));
    expect(call.signal.aborted).toBe(true);
    expect(call.signal.reason).toMatchObject({ message: 'timed out' });
  });

  it('lets a late result go and keeps the first rejection', async () => {
    const call = new CallCancellation([]);
    let finish: (value: string) => void = () => {};
    const waiting = call.race(new Promise<string>((resolve) => (finish = resolve)));
    call.cancel(new Error('stopped'));
    finish('late');
    await expect(waiting).rejects.toThrow('stopped');
  });

  it('no longer calls a subscriber that unsubscribed, and calls one at once on an aborted signal', () => {
    const controller = new AbortController();
    const seen: string[] = [];
    const unsubscribe = subscribeToAbort(controller.signal, () => seen.push('first'));
    subscribeToAbort(controller.signal, () => seen.push('second'));
    unsubscribe();
    controller.abort();
    subscribeToAbort(controller.signal, () => seen.push('late'));
    expect(seen).toEqual(['second', 'late']);
  });
});
