import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defineAgent } from './agent.js';
import { AgentInterjectionError, CleanupError, RunStateError } from './errors.js';
import { createRuntime } from './runtime.js';
import { MockModel } from './testing/mock-model.js';
import { countOpenHandles, newOpenHandles } from './testing/open-handles.js';
import { ScriptedModel } from './testing/scripted-model.js';

const runtime = createRuntime();

// Every run must leave no timer, socket or process behind.
let handlesBefore: Map<string, number>;
beforeEach(() => {
  handlesBefore = countOpenHandles();
});
afterEach(async () => {
  expect(await newOpenHandles(handlesBefore)).toEqual([]);
});

const agentSaying = (...texts: string[]) =>
  defineAgent({ name: 'a', model: new ScriptedModel(texts.map((text) => ({ text }))) });

describe('Run lifecycle', () => {
  it('executes once: a second execution throws RunStateError', async () => {
    const run = await agentSaying('hi').ask('?', { runtime });
    expect(run.completed).toBe(true);
    await expect(run.execute()).rejects.toThrow(RunStateError);
    expect(() => run.stream()).toThrow(/already executed/);
  });

  it('has no outcome before it runs, and closes its resources when it ends', async () => {
    const run = agentSaying('hi').createRun('?', { runtime });
    expect(run.outcome).toBeUndefined();
    expect(run.completed || run.failed || run.partial || run.cancelled).toBe(false);
    const closed: string[] = [];
    run.register({ close: () => closed.push('resource') });
    run.register(() => closed.push('closer'));
    await run.execute();
    expect(closed).toEqual(['closer', 'resource']);
    expect(() => run.register(() => {})).toThrow(RunStateError);
  });

  it('rejects things it cannot close', () => {
    const run = agentSaying('hi').createRun('?', { runtime });
    expect(() => run.register({} as never)).toThrow(/close\(\) method or a closer function/);
  });
});

describe('Run.close', () => {
  it('tries every closer in reverse order, then raises the first CleanupError', async () => {
    const run = agentSaying().createRun('?', { runtime });
    const order: number[] = [];
    run.register(() => {
      order.push(1);
    });
    run.register(() => {
      order.push(2);
      throw new CleanupError('could not remove /tmp/x');
    });
    run.register(() => {
      order.push(3);
      throw new Error('plain failure');
    });
    run.register(async () => {
      order.push(4);
    });
    await expect(run.close()).rejects.toThrow('could not remove /tmp/x');
    expect(order).toEqual([4, 3, 2, 1]);
    await expect(run.close()).rejects.toThrow('could not remove /tmp/x'); // idempotent, same answer
    expect(order).toEqual([4, 3, 2, 1]);
  });

  it('raises the first error when none is a CleanupError', async () => {
    const run = agentSaying().createRun('?', { runtime });
    run.register(() => {
      throw new Error('registered first, closed last');
    });
    run.register(() => {
      throw new Error('registered last, closed first');
    });
    await expect(run.close()).rejects.toThrow('registered last, closed first');
  });

  it('a cleanup failure at the end of a run fails it, announced by run_error, and raises', async () => {
    const run = agentSaying('done').createRun('?', { runtime });
    run.register(() => {
      throw new CleanupError('sandbox process would not die');
    });
    const stream = run.stream();
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    await expect(stream.run).rejects.toThrow('sandbox process would not die');
    expect(types.at(-1)).toBe('run_error');
    expect(run.failed).toBe(true);
    expect(run.error?.name).toBe('CleanupError');
  });
});

describe('Run.once', () => {
  it('performs the work once; concurrent callers are serialised and later ones get undefined', async () => {
    const run = agentSaying().createRun('?', { runtime });
    let performed = 0;
    let running = 0;
    let overlapped = false;
    const work = async () => {
      running += 1;
      if (running > 1) overlapped = true;
      await new Promise((resolve) => setTimeout(resolve, 5));
      running -= 1;
      performed += 1;
      return 'value';
    };
    const results = await Promise.all([run.once('k', work), run.once('k', work), run.once('k', work)]);
    expect(results).toEqual(['value', undefined, undefined]);
    expect(performed).toBe(1);
    expect(overlapped).toBe(false);
    expect(await run.once('other', () => 7)).toBe(7);
  });

  it('does not record a key whose work threw, so a later call retries', async () => {
    const run = agentSaying().createRun('?', { runtime });
    const results = await Promise.allSettled([
      run.once('k', () => {
        throw new Error('first try failed');
      }),
      run.once('k', () => 'second'),
      run.once('k', () => 'third'),
    ]);
    expect(
      results.map((result) => (result.status === 'fulfilled' ? result.value : result.reason.message)),
    ).toEqual(['first try failed', 'second', undefined]);
  });
});

describe('Run.interject', () => {
  it('is refused before the run starts and after it ends', async () => {
    const run = agentSaying('hi').createRun('?', { runtime });
    await expect(run.interject('wait')).rejects.toThrow(AgentInterjectionError);
    await run.execute();
    await expect(run.interject('wait')).rejects.toThrow(/has finished/);
  });

  it('delivers a message to the active agent and resolves with the turn that answered it', async () => {
    let releaseFirstTurn: () => void = () => {};
    const model = new MockModel({
      stream: async function* (request, _options, call) {
        if (call === 0) {
          await new Promise<void>((resolve) => {
            releaseFirstTurn = resolve;
          });
          yield { type: 'text-delta', text: 'first answer' };
        } else {
          const last = request.messages.at(-1);
          yield { type: 'text-delta', text: `noted: ${last?.role === 'user' ? last.content : ''}` };
        }
        yield { type: 'finish', reason: 'stop' };
      },
    });
    const run = defineAgent({ name: 'a', model }).createRun('start', { runtime });
    const finished = run.execute();
    await new Promise((resolve) => setImmediate(resolve));
    const reply = run.interject('also check order 7');
    releaseFirstTurn();
    expect(await reply).toBe('noted: also check order 7');
    await finished;
    expect(run.response).toBe('noted: also check order 7');
    expect(model.calls).toHaveLength(2);
  });
});

describe('Run.context', () => {
  it('shares the run signal, deadline and invocation, with its own state and metadata', async () => {
    const run = agentSaying().createRun('?', {
      runtime,
      timeoutMs: 60_000,
      actorId: 'u1',
      metadata: { a: 1 },
    });
    const context = run.context({ state: { step: 1 }, metadata: { b: 2 } });
    expect(context.signal).toBe(run.signal);
    expect(context.invocation.actorId).toBe('u1');
    expect(context.state).toEqual({ step: 1 });
    expect(context.metadata).toEqual({ a: 1, b: 2 });
    expect(context.remainingTimeMs()).toBeGreaterThan(59_000);
    expect(() => context.throwIfStopped()).not.toThrow();
  });
});
