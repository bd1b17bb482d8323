import { defineAgent, defineTool, type StreamEvent } from '@ghost/core';
import { ScriptedModel } from '@ghost/core/testing';
import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { defineWorkflow } from './workflow.js';

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

const usage = { inputTokens: 10, outputTokens: 5 };

describe('defineWorkflow', () => {
  it('runs agents in sequence and in parallel, returns its value as the response, sums usage and records the steps', async () => {
    const researcher = defineAgent({
      name: 'researcher',
      model: new ScriptedModel([
        { text: 'facts', usage },
        { text: 'quotes', usage },
      ]),
    });
    const writer = defineAgent({ name: 'writer', model: new ScriptedModel([{ text: 'draft', usage }]) });
    const pipeline = defineWorkflow({
      name: 'pipeline',
      async perform(ctx, topic) {
        const [facts, quotes] = await ctx.parallel([
          ctx.invoke(researcher, `Facts on ${topic}`),
          () => ctx.invoke(researcher, `Quotes on ${topic}`),
        ]);
        const draft = await ctx.invoke(writer, `${facts?.response} ${quotes?.response}`);
        return draft.response;
      },
    });
    const run = await pipeline.ask('Lisbon');
    expect(run.outcome).toBe('completed');
    expect(run.response).toBe('draft');
    expect(run.usage.inputTokens).toBe(30);
    expect(run.result?.steps?.map((step) => [step.step, step.outcome])).toContainEqual([
      'writer',
      'completed',
    ]);
    expect(run.result?.steps).toHaveLength(3);
  });

  it('does not run an invocation that is never awaited', async () => {
    const model = new ScriptedModel([{ text: 'unused' }]);
    const agent = defineAgent({ name: 'idle', model });
    const workflow = defineWorkflow({
      name: 'lazy',
      async perform(ctx) {
        ctx.invoke(agent, 'never');
        return 'done';
      },
    });
    const run = await workflow.ask('go');
    expect(run.response).toBe('done');
    expect(model.calls).toHaveLength(0);
  });

  it('streams step events, and agent events sourced by path only when asked', async () => {
    const makeAgent = (name: string) =>
      defineAgent({
        name,
        model: new ScriptedModel([{ text: 'first run' }, { text: [`${name}-1`, `${name}-2`] }]),
      });
    const a = makeAgent('alpha');
    const b = makeAgent('beta');
    const workflow = defineWorkflow({
      name: 'fan',
      async perform(ctx) {
        const results = await ctx.parallel([ctx.invoke(a, 'x'), ctx.invoke(b, 'y')]);
        return results.map((result) => result.response).join('|');
      },
    });
    const plain = await collect(workflow.streamAsk('go'));
    expect(plain.some((event) => event.type === 'agent_stream')).toBe(false);
    expect(plain.filter((event) => event.type === 'assembly_step_start')).toHaveLength(2);

    const events = await collect(workflow.streamAsk('go', { includeAgentEvents: true }));
    const nested = events.flatMap((event) => (event.type === 'agent_stream' ? [event.data] : []));
    for (const name of ['alpha', 'beta']) {
      const own = nested.filter((data) => data.source.agentName === name);
      expect(own[0]?.source.path.slice(0, 2)).toEqual([`step:${name}`, name]);
      const texts = own.flatMap((data) => (data.event.type === 'text_delta' ? [data.event.data.text] : []));
      expect(texts).toEqual([`${name}-1`, `${name}-2`]);
      expect(own.at(-1)?.event.type).toBe('invocation_stop');
    }
    expect(events.at(-1)?.type).toBe('run_stop');
  });

  it('children inherit the context, and invoke can add to it', async () => {
    const seen: unknown[] = [];
    const model = new ScriptedModel([{ text: 'ok' }]);
    const agent = defineAgent({ name: 'reader', model });
    const workflow = defineWorkflow({
      name: 'ctx',
      async perform(ctx) {
        seen.push(ctx.context);
        return (await ctx.invoke(agent, 'x', { context: { extra: 1 } })).response;
      },
    });
    const run = await workflow.ask('go', { context: { tenant: 't1' } });
    expect(run.response).toBe('ok');
    expect(seen).toEqual([{ tenant: 't1' }]);
  });

  it('cancelling mid-parallel stops every agent and ends the run as cancelled', async () => {
    const controller = new AbortController();
    const slow = (name: string) =>
      defineAgent({ name, model: new ScriptedModel([{ text: ['a', 'b', 'c'], delayMs: 200 }]) });
    const workflow = defineWorkflow({
      name: 'cancel',
      async perform(ctx) {
        await ctx.parallel(
          [ctx.invoke(slow('one'), 'x'), ctx.invoke(slow('two'), 'y'), ctx.invoke(slow('three'), 'z')],
          {
            maxConcurrency: 2,
          },
        );
        return 'never';
      },
    });
    const stream = workflow.streamAsk('go', { signal: controller.signal });
    const events: StreamEvent[] = [];
    for await (const event of stream) {
      events.push(event);
      if (
        event.type === 'assembly_step_start' &&
        events.filter((e) => e.type === 'assembly_step_start').length === 2
      ) {
        controller.abort();
      }
    }
    const run = await stream.run;
    expect(run.outcome).toBe('cancelled');
    expect(events.filter((event) => event.type === 'assembly_step_start')).toHaveLength(2);
    expect(events.filter((event) => event.type === 'assembly_step_error')).toHaveLength(2);
    expect(events.at(-1)?.type).toBe('run_cancel');
  });

  it('interjection is refused while no single agent runs', async () => {
    const workflow = defineWorkflow({ name: 'empty', perform: async () => 'x' });
    const run = workflow.createRun('go');
    await expect(run.interject('hi')).rejects.toMatchObject({ code: 'AGENT_INTERJECTION_UNAVAILABLE' });
    await run.execute();
  });

  it('an interjection reaches the one step agent that runs, on its next model turn', async () => {
    let openGate: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      openGate = resolve;
    });
    const pause = defineTool({
      name: 'pause',
      description: 'Waits for the test.',
      input: Type.Object({}),
      execute: async () => {
        await gate;
        return 'resumed';
      },
    });
    const model = new ScriptedModel([{ toolCalls: [{ name: 'pause', input: {} }] }, { text: 'Colour.' }]);
    const editor = defineAgent({ name: 'editor', model, tools: [pause] });
    const workflow = defineWorkflow({
      name: 'edit',
      perform: async (ctx, input) => (await ctx.invoke(editor, input)).response,
    });
    const run = workflow.createRun('Spell color.', { includeAgentEvents: true });
    let delivered: Promise<string> | undefined;
    for await (const event of run.stream()) {
      if (event.type === 'agent_stream' && event.data.event.type === 'tool_start') {
        delivered = run.interject('Use British spelling.');
        openGate();
      }
    }
    expect(run.outcome).toBe('completed');
    await expect(delivered).resolves.toBeTypeOf('string');
    expect(JSON.stringify(model.calls[1]?.messages)).toContain('Use British spelling.');
  });

  it('refuses an interjection while two step agents run at once', async () => {
    let openGate: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      openGate = resolve;
    });
    const pause = defineTool({
      name: 'pause',
      description: 'Waits for the test.',
      input: Type.Object({}),
      execute: async () => {
        await gate;
        return 'resumed';
      },
    });
    const pausing = (name: string) =>
      defineAgent({
        name,
        model: new ScriptedModel([{ toolCalls: [{ name: 'pause', input: {} }] }, { text: name }]),
        tools: [pause],
      });
    const workflow = defineWorkflow({
      name: 'two',
      perform: async (ctx) =>
        (await ctx.parallel([ctx.invoke(pausing('a'), 'x'), ctx.invoke(pausing('b'), 'y')]))
          .map((result) => result.response)
          .join(','),
    });
    const run = workflow.createRun('go', { includeAgentEvents: true });
    let refusal: Promise<string> | undefined;
    let started = 0;
    for await (const event of run.stream()) {
      if (event.type === 'agent_stream' && event.data.event.type === 'tool_start') {
        started += 1;
        if (started === 2) {
          refusal = run.interject('Stop.');
          openGate();
        }
      }
    }
    expect(run.response).toBe('a,b');
    await expect(refusal).rejects.toMatchObject({
      code: 'AGENT_INTERJECTION_UNAVAILABLE',
      message: expect.stringContaining('2 agents are running now'),
    });
  });

  it('gives an agent the history it continues', async () => {
    const model = new ScriptedModel([{ text: 'Yes, Lisbon.' }]);
    const agent = defineAgent({ name: 'guide', model });
    const workflow = defineWorkflow({
      name: 'continue',
      perform: async (ctx, input) =>
        (
          await ctx.invoke(agent, input, {
            history: [
              { role: 'user', content: 'Name a city by the sea.' },
              { role: 'assistant', content: 'Lisbon.' },
            ],
          })
        ).response,
    });
    expect((await workflow.ask('That one?')).response).toBe('Yes, Lisbon.');
    const messages = model.calls[0]?.messages ?? [];
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(JSON.stringify(messages)).toContain('Name a city by the sea.');
  });

  it('parallel runs at most maxConcurrency at once, keeps the order, and on a failure starts nothing more', async () => {
    let active = 0;
    let most = 0;
    const task = (value: number) => async () => {
      active += 1;
      most = Math.max(most, active);
      await new Promise((resolve) => setTimeout(resolve, 5));
      active -= 1;
      return value;
    };
    const ordered = defineWorkflow({
      name: 'ordered',
      perform: async (ctx) => ctx.parallel([5, 4, 3, 2, 1].map(task), { maxConcurrency: 2 }),
    });
    const run = await ordered.ask('go');
    expect(run.output).toEqual([5, 4, 3, 2, 1]);
    expect(run.response).toBe('[5,4,3,2,1]');
    expect(most).toBe(2);

    const started: number[] = [];
    const failing = defineWorkflow({
      name: 'failing',
      perform: async (ctx) =>
        ctx.parallel(
          [1, 2, 3].map((value) => async () => {
            started.push(value);
            if (value === 1) throw new Error('the first task failed');
            return value;
          }),
          { maxConcurrency: 1 },
        ),
    });
    const failed = await failing.ask('go');
    expect(failed.outcome).toBe('failed');
    expect(failed.error?.message).toContain('the first task failed');
    expect(started).toEqual([1]);
  });

  it('says what is wrong with a bad option, child or concurrency', async () => {
    expect(() => defineWorkflow({ name: 'x', perform: async () => '', steps: 3 } as never)).toThrow(
      expect.objectContaining({
        code: 'OPTION_UNKNOWN',
        message: expect.stringContaining("no option 'steps'"),
      }),
    );
    const badChild = defineWorkflow({
      name: 'bad-child',
      perform: async (ctx) => ctx.invoke({ name: 'not an agent' } as never, 'x'),
    });
    const run = await badChild.ask('go');
    expect(run.outcome).toBe('failed');
    expect(run.error?.message).toContain('takes an agent (defineAgent) or an assembly');
    const badConcurrency = defineWorkflow({
      name: 'bad-concurrency',
      perform: async (ctx) => ctx.parallel([], { maxConcurrency: 0 }),
    });
    expect((await badConcurrency.ask('go')).error?.message).toContain('maxConcurrency = 0');
  });

  it('rejects a definition without perform', () => {
    expect(() => defineWorkflow({ name: 'x' } as never)).toThrow(/perform/);
  });
});
