import { defineAgent, type StreamEvent } from '@ghost/core';
import { countOpenHandles, newOpenHandles, ScriptedModel, type ScriptedStep } from '@ghost/core/testing';
import { describe, expect, it } from 'vitest';
import { AssemblyLimitError, AssemblyStepTimeoutError } from './assembly-errors.js';
import { defineSwarm } from './swarm.js';
import { defineWorkflow } from './workflow.js';

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

const usage = { inputTokens: 10, outputTokens: 5 };

/** A member's turn that hands off: the transfer call, then the short answer that ends the turn. */
function handOff(to: string, note: { reason?: string; message?: string } = {}): ScriptedStep[] {
  return [
    { toolCalls: [{ name: `transfer_to_${to}`, input: note }], usage },
    { text: `Passing you to ${to}.`, usage },
  ];
}

function member(name: string, steps: ScriptedStep[]) {
  const model = new ScriptedModel(steps);
  return { model, agent: defineAgent({ name, model }) };
}

const assemblyTypes = new Set([
  'assembly_step_start',
  'assembly_step_stop',
  'assembly_step_error',
  'assembly_step_retry',
  'assembly_transition',
  'assembly_handoff_loop',
]);

describe('defineSwarm', () => {
  it('triage hands off to billing, which answers with the conversation so far; usage is summed', async () => {
    const triage = member(
      'triage',
      handOff('billing', { reason: 'refund', message: 'Charged twice in May.' }),
    );
    const billing = member('billing', [{ text: 'Refunded the second charge.', usage }]);
    const swarm = defineSwarm({
      name: 'support',
      members: [triage.agent, billing.agent],
      start: 'triage',
      handoffs: { triage: ['billing'], billing: ['triage'] },
    });
    expect(swarm.kind).toBe('swarm');
    const stream = swarm.streamAsk('I was charged twice.');
    const events = await collect(stream);
    const run = await stream.run;
    expect(run.outcome).toBe('completed');
    expect(run.response).toBe('Refunded the second charge.');
    expect(run.usage.inputTokens).toBe(30);
    expect(run.usage.outputTokens).toBe(15);
    expect(run.result?.steps?.map((step) => [step.step, step.outcome])).toEqual([
      ['triage', 'completed'],
      ['billing', 'completed'],
    ]);
    // Each member sees the transfer tools of its own handoffs only.
    expect(triage.model.calls[0]?.tools.map((tool) => tool.name)).toEqual(['transfer_to_billing']);
    expect(billing.model.calls[0]?.tools.map((tool) => tool.name)).toEqual(['transfer_to_triage']);
    // The tool result tells triage to end its turn.
    const toolResult = triage.model.calls[1]?.messages.at(-1);
    expect(toolResult?.role === 'tool' ? toolResult.content : '').toContain('End your turn now');
    // Billing gets the original input and triage's answer as history, the handoff as its input.
    const messages = billing.model.calls[0]?.messages ?? [];
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(messages[0]?.content).toBe('I was charged twice.');
    expect(messages[1]?.content).toBe('Passing you to billing.');
    expect(messages[2]?.content).toContain("'triage' handed the conversation over to you ('billing')");
    expect(messages[2]?.content).toContain('Reason: refund');
    expect(messages[2]?.content).toContain('Message: Charged twice in May.');
    const transitions = events.flatMap((event) => (event.type === 'assembly_transition' ? [event.data] : []));
    expect(transitions).toEqual([
      { assemblyName: 'support', from: 'triage', to: 'billing', kind: 'handoff' },
    ]);
  });

  it('stops members handing off back and forth at maxHandoffRepeats', async () => {
    const triage = member('triage', [...handOff('billing'), ...handOff('billing')]);
    const billing = member('billing', handOff('triage'));
    const swarm = defineSwarm({
      name: 'loop',
      members: [triage.agent, billing.agent],
      start: 'triage',
      handoffs: { triage: ['billing'], billing: ['triage'] },
      maxHandoffRepeats: 1,
    });
    const stream = swarm.streamAsk('help');
    const events = await collect(stream);
    const run = await stream.run;
    expect(run.outcome).toBe('failed');
    expect(run.error).toBeInstanceOf(AssemblyLimitError);
    expect(run.error).toMatchObject({ code: 'ASSEMBLY_LIMIT_REACHED', limit: 'maxHandoffRepeats', value: 1 });
    const own = events.filter(
      (event) => event.type === 'assembly_transition' || event.type === 'assembly_handoff_loop',
    );
    expect(own.map((event) => [event.type, event.data])).toEqual([
      ['assembly_transition', { assemblyName: 'loop', from: 'triage', to: 'billing', kind: 'handoff' }],
      ['assembly_transition', { assemblyName: 'loop', from: 'billing', to: 'triage', kind: 'handoff' }],
      [
        'assembly_handoff_loop',
        { assemblyName: 'loop', from: 'triage', to: 'billing', repeats: 2, maxHandoffRepeats: 1 },
      ],
    ]);
    expect(events.at(-1)?.type).toBe('run_error');
    expect(triage.model.remainingSteps).toBe(0);
  });

  it('fails with AssemblyLimitError after maxSteps member turns', async () => {
    const a = member('a', handOff('b'));
    const b = member('b', handOff('a'));
    const swarm = defineSwarm({
      name: 'steps',
      members: [a.agent, b.agent],
      start: 'a',
      handoffs: { a: ['b'], b: ['a'] },
      maxSteps: 2,
      maxHandoffRepeats: 10,
    });
    const stream = swarm.streamAsk('go');
    const events = await collect(stream);
    const run = await stream.run;
    expect(run.outcome).toBe('failed');
    expect(run.error).toMatchObject({ limit: 'maxSteps', value: 2 });
    expect(events.filter((event) => event.type === 'assembly_step_stop')).toHaveLength(2);
    // The handoff that would exceed the limit never happens.
    expect(events.filter((event) => event.type === 'assembly_transition')).toHaveLength(1);
  });

  it('times a member out and retries it, and fails with AssemblyStepTimeoutError when retries run out', async () => {
    const triage = member('triage', handOff('billing'));
    const billing = member('billing', [
      { text: 'late', delayMs: 300 },
      { text: 'late again', delayMs: 300 },
    ]);
    const swarm = defineSwarm({
      name: 'slow',
      members: [triage.agent, billing.agent],
      start: 'triage',
      handoffs: { triage: ['billing'] },
      memberOptions: { billing: { timeoutMs: 30, retries: 1, retryDelayMs: 1 } },
    });
    const stream = swarm.streamAsk('help');
    const events = await collect(stream);
    const run = await stream.run;
    expect(run.outcome).toBe('failed');
    expect(run.error).toBeInstanceOf(AssemblyStepTimeoutError);
    expect(run.error).toMatchObject({ step: 'billing', timeoutMs: 30 });
    const billingEvents = events.flatMap((event) =>
      event.type.startsWith('assembly_step_') && (event.data as { step: string }).step === 'billing'
        ? [[event.type, (event.data as { attempt: number }).attempt]]
        : [],
    );
    expect(billingEvents).toEqual([
      ['assembly_step_start', 1],
      ['assembly_step_error', 1],
      ['assembly_step_retry', 2],
      ['assembly_step_start', 2],
      ['assembly_step_error', 2],
    ]);
  });

  it('forgets a handoff asked for in an attempt that then failed', async () => {
    const billing = member('billing', [
      { toolCalls: [{ name: 'transfer_to_triage', input: {} }] },
      { text: 'too slow', delayMs: 300 },
      { text: 'Answered on retry.' },
    ]);
    const triage = member('triage', []);
    const swarm = defineSwarm({
      name: 'retry',
      members: [billing.agent, triage.agent],
      start: 'billing',
      handoffs: { billing: ['triage'] },
      memberOptions: { billing: { timeoutMs: 50, retries: 1 } },
    });
    const run = await swarm.ask('help');
    expect(run.outcome).toBe('completed');
    expect(run.response).toBe('Answered on retry.');
    expect(triage.model.calls).toHaveLength(0);
  });

  it('gives a member no tool for a handoff outside its list; a second transfer in one turn is refused', async () => {
    const triage = member('triage', [
      {
        toolCalls: [
          { id: 'c1', name: 'transfer_to_faq', input: {} },
          { id: 'c2', name: 'transfer_to_billing', input: {} },
        ],
      },
      { toolCalls: [{ id: 'c3', name: 'transfer_to_sales', input: {} }] },
      { text: 'Billing will help.' },
    ]);
    const billing = member('billing', [{ text: 'Billing here.' }]);
    const sales = member('sales', []);
    const faq = member('faq', []);
    const swarm = defineSwarm({
      name: 'limits',
      members: [triage.agent, billing.agent, sales.agent, faq.agent],
      start: 'triage',
      handoffs: { triage: ['billing', 'sales'] },
    });
    const run = await swarm.ask('help');
    expect(run.response).toBe('Billing here.');
    const unknownTool = triage.model.calls[1]?.messages.find(
      (message) => message.role === 'tool' && message.toolCallId === 'c1',
    );
    expect(unknownTool).toMatchObject({ isError: true });
    const refused = triage.model.calls[2]?.messages.at(-1);
    expect(refused).toMatchObject({ role: 'tool', isError: true });
    expect(refused?.content).toContain("already handed over to 'billing'");
    expect(faq.model.calls).toHaveLength(0);
    expect(sales.model.calls).toHaveLength(0);
  });

  it('streams its events in order, with agent events sourced by path when asked', async () => {
    const triage = member('triage', handOff('billing'));
    const billing = member('billing', [{ text: ['Re', 'funded.'] }]);
    const swarm = defineSwarm({
      name: 'support',
      members: [triage.agent, billing.agent],
      start: 'triage',
      handoffs: { triage: ['billing'] },
    });
    const events = await collect(swarm.streamAsk('help', { includeAgentEvents: true }));
    const own = events.flatMap((event) =>
      assemblyTypes.has(event.type)
        ? [`${event.type}:${(event.data as { step?: string }).step ?? (event.data as { to: string }).to}`]
        : [],
    );
    expect(own).toEqual([
      'assembly_step_start:triage',
      'assembly_step_stop:triage',
      'assembly_transition:billing',
      'assembly_step_start:billing',
      'assembly_step_stop:billing',
    ]);
    const transitionAt = events.findIndex((event) => event.type === 'assembly_transition');
    const nested = events.flatMap((event, index) =>
      event.type === 'agent_stream' ? [{ index, data: event.data }] : [],
    );
    for (const name of ['triage', 'billing']) {
      const mine = nested.filter(({ data }) => data.source.agentName === name);
      expect(mine.length).toBeGreaterThan(0);
      for (const { index, data } of mine) {
        expect(data.source.path.slice(0, 2)).toEqual([`step:${name}`, name]);
        expect(name === 'triage' ? index < transitionAt : index > transitionAt).toBe(true);
      }
      expect(mine.at(-1)?.data.event.type).toBe('invocation_stop');
    }
    const billingText = nested.flatMap(({ data }) =>
      data.source.agentName === 'billing' && data.event.type === 'text_delta' ? [data.event.data.text] : [],
    );
    expect(billingText).toEqual(['Re', 'funded.']);
    expect(events[0]?.type).toBe('run_start');
    expect(events.at(-1)?.type).toBe('run_stop');
  });

  it('cancelling mid-member ends the run as cancelled and leaves nothing running', async () => {
    const before = countOpenHandles();
    const controller = new AbortController();
    const triage = member('triage', handOff('billing'));
    const billing = member('billing', [{ text: ['a', 'b', 'c'], delayMs: 200 }]);
    const swarm = defineSwarm({
      name: 'cancel',
      members: [triage.agent, billing.agent],
      start: 'triage',
      handoffs: { triage: ['billing'] },
    });
    const stream = swarm.streamAsk('help', { signal: controller.signal, includeAgentEvents: true });
    const events: StreamEvent[] = [];
    for await (const event of stream) {
      events.push(event);
      // Mid-member: billing's model has started streaming its (slow) answer.
      if (
        event.type === 'agent_stream' &&
        event.data.source.agentName === 'billing' &&
        event.data.event.type === 'model_start'
      ) {
        controller.abort();
      }
    }
    const run = await stream.run;
    expect(run.outcome).toBe('cancelled');
    expect(billing.model.calls).toHaveLength(1);
    expect(events.filter((event) => event.type === 'assembly_step_error')).toHaveLength(1);
    expect(events.some((event) => event.type === 'assembly_transition')).toBe(true);
    expect(events.at(-1)?.type).toBe('run_cancel');
    expect(await newOpenHandles(before)).toEqual([]);
  });

  it('runs nested as a workflow step, below the step path', async () => {
    const triage = member('triage', handOff('billing'));
    const billing = member('billing', [{ text: 'Billing answer.', usage }]);
    const swarm = defineSwarm({
      name: 'support',
      members: [triage.agent, billing.agent],
      start: 'triage',
      handoffs: { triage: ['billing'] },
    });
    const writer = member('writer', [{ text: 'Summary.', usage }]);
    const workflow = defineWorkflow({
      name: 'desk',
      async perform(ctx, input) {
        const answer = await ctx.invoke(swarm, input);
        return (await ctx.invoke(writer.agent, answer.response)).response;
      },
    });
    const stream = workflow.streamAsk('help', { includeAgentEvents: true });
    const events = await collect(stream);
    const run = await stream.run;
    expect(run.outcome).toBe('completed');
    expect(run.response).toBe('Summary.');
    expect(writer.model.calls[0]?.messages[0]?.content).toBe('Billing answer.');
    expect(run.usage.inputTokens).toBe(40);
    expect(run.result?.steps?.map((step) => step.path)).toEqual([
      ['step:support', 'support', 'step:triage'],
      ['step:support', 'support', 'step:billing'],
      ['step:support'],
      ['step:writer'],
    ]);
    const billingEvent = events.find(
      (event) => event.type === 'agent_stream' && event.data.source.agentName === 'billing',
    );
    expect(billingEvent?.type === 'agent_stream' ? billingEvent.data.source.path.slice(0, 4) : []).toEqual([
      'step:support',
      'support',
      'step:billing',
      'billing',
    ]);
    expect(events.find((event) => event.type === 'assembly_transition')?.data).toMatchObject({
      assemblyName: 'support',
      from: 'triage',
      to: 'billing',
    });
  });

  it('rejects a wrong definition with a ConfigurationError', () => {
    const a = defineAgent({ name: 'a', model: new ScriptedModel([]) });
    const b = defineAgent({ name: 'b', model: new ScriptedModel([]) });
    const base = { name: 's', members: [a, b], start: 'a', handoffs: { a: ['b'] } };
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ members: [a, defineAgent({ name: 'a', model: new ScriptedModel([]) })] }, /two members named 'a'/],
      [{ members: [] }, /members/],
      [{ members: [a, { name: 'x' }] }, /must be an agent/],
      [{ start: 'c' }, /starts with 'c'/],
      [{ handoffs: { a: ['c'] } }, /names 'c', which is not a member/],
      [{ handoffs: { c: ['a'] } }, /names 'c', which is not a member/],
      [{ handoffs: { a: ['a'] } }, /hands off to itself/],
      [{ handoffs: undefined }, /needs handoffs/],
      [{ maxSteps: 0 }, /maxSteps/],
      [{ maxHandoffRepeats: 1.5 }, /maxHandoffRepeats/],
      [{ memberOptions: { c: {} } }, /names 'c'/],
      [{ memberOptions: { a: { timeoutMs: -1 } } }, /timeoutMs/],
      [{ memberOptions: { a: { retry: 1 } } }, /no option 'retry'/],
      [{ extra: true }, /no option 'extra'/],
      [{ name: '' }, /non-empty name/],
    ];
    for (const [change, message] of cases) {
      expect(() => defineSwarm({ ...base, ...change } as never)).toThrow(message);
    }
    const similar = defineAgent({ name: 'b c', model: new ScriptedModel([]) });
    const clash = defineAgent({ name: 'b_c', model: new ScriptedModel([]) });
    expect(() =>
      defineSwarm({ name: 's', members: [a, similar, clash], start: 'a', handoffs: { a: ['b c', 'b_c'] } }),
    ).toThrow(/transfer_to_b_c/);
    expect(() => defineSwarm({ ...base, members: [a, a] })).toThrow(
      expect.objectContaining({ name: 'ConfigurationError', code: 'CONFIGURATION_INVALID' }),
    );
  });
});
