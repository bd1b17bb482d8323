import Type from 'typebox';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defineAgent } from './agent.js';
import { ConfigurationError, ToolError } from './errors.js';
import type { ModelToolMessage } from './model.js';
import { createRuntime } from './runtime.js';
import type { StreamEvent } from './stream-event.js';
import { MockModel } from './testing/mock-model.js';
import { countOpenHandles, newOpenHandles } from './testing/open-handles.js';
import { ScriptedModel } from './testing/scripted-model.js';
import { defineTool } from './tool.js';

const runtime = createRuntime();

// Every run must leave no timer, socket or process behind.
let handlesBefore: Map<string, number>;
beforeEach(() => {
  handlesBefore = countOpenHandles();
});
afterEach(async () => {
  expect(await newOpenHandles(handlesBefore)).toEqual([]);
});

const helpCenter: Record<string, string> = {
  refunds: 'Refunds take 5 business days.',
  shipping: 'Orders ship within 2 days.',
};

const lookup = defineTool({
  name: 'help_center_lookup',
  description: 'Finds the help-center entry for a topic.',
  input: Type.Object({ topic: Type.String() }),
  execute: ({ topic }) => {
    const text = helpCenter[topic];
    if (!text) throw new ToolError(`No entry for '${topic}'. Try refunds or shipping.`);
    return { topic, text };
  },
});

function toolMessages(model: ScriptedModel | MockModel, call: number): ModelToolMessage[] {
  return (model.calls[call]?.messages ?? []).filter(
    (message) => message.role === 'tool',
  ) as ModelToolMessage[];
}

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe('defineAgent', () => {
  it('rejects bad definitions at definition time', () => {
    const model = new ScriptedModel([]);
    expect(() => defineAgent({ name: '', model })).toThrow(ConfigurationError);
    expect(() => defineAgent({ name: 'a', model: {} as never })).toThrow(/needs a model/);
    expect(() => defineAgent({ name: 'a', model, tools: [lookup, lookup] })).toThrow(/two tools named/);
    expect(() => defineAgent({ name: 'a', model, limits: { maxTurns: 0 } })).toThrow(/limits.maxTurns/);
    expect(() => defineAgent({ name: 'a', model, limits: { maxTurn: 3 } as never })).toThrow(
      /no option 'maxTurn'/,
    );
    expect(() => defineAgent({ name: 'a', model, tool: [] } as never)).toThrow(/no option 'tool'/);
  });

  it('has the documented default limits', () => {
    const agent = defineAgent({ name: 'a', model: new ScriptedModel([]) });
    expect(agent.limits).toEqual({
      maxTurns: 100,
      maxToolCalls: 1000,
      maxParallelToolCalls: 8,
      maxDepth: 8,
      maxLiveSubagents: 8,
      maxSubagents: 20,
      maxQueuedSubagentMessages: 8,
      subagentWaitMs: 30_000,
      approvalTimeoutMs: 600_000,
      maxToolCallsPerAnswer: 1000,
      maxToolCallBytes: 8 * 1024 * 1024,
      maxAnswerBytes: 64 * 1024 * 1024,
      maxStreamEventBytes: 16 * 1024 * 1024,
      streamIdleTimeoutMs: 600_000,
    });
    expect(agent.instructions).toBe('You are a helpful agent.');
  });
});

describe('agent.ask', () => {
  it('calls a tool, gives the model its result and completes', async () => {
    const model = new ScriptedModel([
      {
        toolCalls: [{ id: 'c1', name: 'help_center_lookup', input: { topic: 'refunds' } }],
        usage: { inputTokens: 20, outputTokens: 5 },
      },
      { text: 'Refunds take 5 business days.', usage: { inputTokens: 40, outputTokens: 8 } },
    ]);
    const agent = defineAgent({ name: 'support', instructions: 'Be brief.', model, tools: [lookup] });
    const run = await agent.ask('How long do refunds take?', { runtime });

    expect(run.outcome).toBe('completed');
    expect(run.completed).toBe(true);
    expect(run.response).toBe('Refunds take 5 business days.');
    expect(run.usage.toJSON()).toEqual({ inputTokens: 60, outputTokens: 13, totalTokens: 73 });
    expect(run.usage.cacheReadTokens).toBeUndefined();
    expect(run.result?.turns).toBe(2);
    expect(run.result?.toolCalls).toBe(1);
    model.assertConsumed();

    const first = model.calls[0];
    expect(first?.instructions).toBe('Be brief.');
    expect(first?.tools).toEqual([
      { name: 'help_center_lookup', description: lookup.description, inputSchema: lookup.inputJsonSchema },
    ]);
    expect(toolMessages(model, 1)).toEqual([
      {
        role: 'tool',
        toolCallId: 'c1',
        toolName: 'help_center_lookup',
        content: JSON.stringify({ topic: 'refunds', text: 'Refunds take 5 business days.' }),
      },
    ]);
  });

  it('tells the model about an unknown tool, invalid input and malformed JSON, and goes on', async () => {
    const model = new ScriptedModel([
      {
        toolCalls: [
          { name: 'no_such_tool', input: {} },
          { name: 'help_center_lookup', input: { topic: 42 } },
          { name: 'help_center_lookup', input: '{"topic": ' },
          { name: 'help_center_lookup', input: {} },
        ],
      },
      { text: 'Sorry.' },
    ]);
    const agent = defineAgent({ name: 'support', model, tools: [lookup] });
    const run = await agent.ask('?', { runtime });
    expect(run.outcome).toBe('completed');
    const contents = toolMessages(model, 1).map((message) => message.content);
    expect(contents[0]).toBe("Unknown tool 'no_such_tool'. Available tools: help_center_lookup.");
    expect(contents[1]).toBe('Invalid tool input: /topic: must be string');
    expect(contents[2]).toMatch(/^Invalid tool input: \/: arguments are not valid JSON \(/);
    expect(contents[3]).toMatch(/^Invalid tool input: \/: must have required propert/);
    expect(toolMessages(model, 1).every((message) => message.isError)).toBe(true);
  });

  it('sends ToolError messages to the model and hides other exceptions', async () => {
    const broken = defineTool({
      name: 'broken',
      description: 'Always fails.',
      input: Type.Object({}),
      execute: () => {
        throw new RangeError('secret internal detail at /srv/app.js:12');
      },
    });
    const model = new ScriptedModel([
      {
        toolCalls: [
          { name: 'help_center_lookup', input: { topic: 'warranty' } },
          { name: 'broken', input: {} },
        ],
      },
      { text: 'done' },
    ]);
    const run = await defineAgent({ name: 's', model, tools: [lookup, broken] }).ask('?', { runtime });
    const [toolError, hidden] = toolMessages(model, 1);
    expect(toolError?.content).toBe("No entry for 'warranty'. Try refunds or shipping.");
    expect(hidden?.content).toBe('Tool failed (RangeError)');
    expect(JSON.stringify(model.calls[1])).not.toContain('secret');
    expect(run.outcome).toBe('completed');
  });

  it('reports a result that is not JSON or breaks the output schema as a tool failure', async () => {
    const cyclic = defineTool({
      name: 'cyclic',
      description: 'd',
      input: Type.Object({}),
      execute: () => {
        const value: Record<string, unknown> = {};
        value.self = value;
        return value;
      },
    });
    const wrongShape = defineTool({
      name: 'wrong_shape',
      description: 'd',
      input: Type.Object({}),
      output: Type.Object({ count: Type.Number() }),
      execute: () => ({ count: 'many' }) as never,
    });
    const model = new ScriptedModel([
      {
        toolCalls: [
          { name: 'cyclic', input: {} },
          { name: 'wrong_shape', input: {} },
        ],
      },
      { text: 'ok' },
    ]);
    const stream = defineAgent({ name: 's', model, tools: [cyclic, wrongShape] }).streamAsk('?', { runtime });
    const stops = (await collect(stream)).filter((event) => event.type === 'tool_stop');
    expect(toolMessages(model, 1).map((message) => message.content)).toEqual([
      'Tool failed (ToolResultInvalidError)',
      'Tool failed (ToolResultInvalidError)',
    ]);
    expect(stops.map((event) => event.data.error?.message)).toEqual([
      expect.stringMatching(/cycle/),
      expect.stringMatching(/output schema: \/count: must be number/),
    ]);
  });

  it('lets authorize deny a call with a reason the model sees', async () => {
    const refund = defineTool({
      name: 'issue_refund',
      description: 'Refunds an order.',
      input: Type.Object({ orderId: Type.String() }),
      authorize: ({ actorId, context }) =>
        actorId === 'agent-7' && context.role === 'supervisor'
          ? { allow: true }
          : { allow: false, reason: 'only supervisors may refund' },
      execute: ({ orderId }) => ({ refunded: orderId }),
    });
    const script = () =>
      new ScriptedModel([
        { toolCalls: [{ name: 'issue_refund', input: { orderId: 'A1' } }] },
        { text: 'ok' },
      ]);

    const denied = script();
    await defineAgent({ name: 's', model: denied, tools: [refund] }).ask('refund', {
      runtime,
      actorId: 'agent-9',
      context: { role: 'agent' },
    });
    expect(toolMessages(denied, 1)[0]?.content).toBe('Not authorized: only supervisors may refund');

    const allowed = script();
    await defineAgent({ name: 's', model: allowed, tools: [refund] }).ask('refund', {
      runtime,
      actorId: 'agent-7',
      context: { role: 'supervisor' },
    });
    expect(toolMessages(allowed, 1)[0]?.content).toBe('{"refunded":"A1"}');
  });

  it('times out a hanging tool, aborting its signal, and tells the model', async () => {
    let sawAbortReason: unknown;
    const hanging = defineTool({
      name: 'hang',
      description: 'Never answers.',
      input: Type.Object({}),
      timeoutMs: 50,
      execute: (_input, { signal }) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener('abort', () => {
            sawAbortReason = signal.reason;
            reject(signal.reason);
          });
        }),
    });
    const model = new ScriptedModel([{ toolCalls: [{ name: 'hang', input: {} }] }, { text: 'gave up' }]);
    const run = await defineAgent({ name: 's', model, tools: [hanging] }).ask('?', { runtime });
    expect(run.outcome).toBe('completed');
    expect(toolMessages(model, 1)[0]?.content).toBe("Tool 'hang' timed out after 50 ms.");
    expect((sawAbortReason as Error).name).toBe('ToolTimeoutError');
  });

  it('does not wait for a tool that ignores its abort signal, and drops its late result', async () => {
    let finishLate: (value: string) => void = () => {};
    const stubborn = defineTool({
      name: 'stubborn',
      description: 'Ignores its signal.',
      input: Type.Object({}),
      timeoutMs: 30,
      execute: () =>
        new Promise<string>((resolve) => {
          finishLate = resolve;
        }),
    });
    const model = new ScriptedModel([{ toolCalls: [{ name: 'stubborn', input: {} }] }, { text: 'moved on' }]);
    const run = await defineAgent({ name: 's', model, tools: [stubborn] }).ask('?', { runtime });
    finishLate('too late');
    expect(run.response).toBe('moved on');
    expect(toolMessages(model, 1)[0]?.content).toBe("Tool 'stubborn' timed out after 30 ms.");
  });

  it('runs independent calls concurrently, bounded, and an exclusive tool alone', async () => {
    let inFlight = 0;
    let peak = 0;
    const log: string[] = [];
    const slow = (name: string, exclusive: boolean) =>
      defineTool({
        name,
        description: 'd',
        input: Type.Object({ n: Type.Number() }),
        exclusive,
        execute: async ({ n }) => {
          inFlight += 1;
          peak = Math.max(peak, inFlight);
          log.push(`${name}${n}:start(${inFlight})`);
          await new Promise((resolve) => setTimeout(resolve, 20));
          inFlight -= 1;
          return n;
        },
      });
    const work = slow('work', false);
    const solo = slow('solo', true);
    const calls = [1, 2, 3].map((n) => ({ name: 'work', input: { n } }));
    const model = new ScriptedModel([
      { toolCalls: [...calls, { name: 'solo', input: { n: 4 } }, { name: 'work', input: { n: 5 } }] },
      { text: 'done' },
    ]);
    const agent = defineAgent({ name: 's', model, tools: [work, solo], limits: { maxParallelToolCalls: 2 } });
    await agent.ask('?', { runtime });
    expect(peak).toBe(2);
    expect(log).toContain('solo4:start(1)');
    // Results go back in the order the model made the calls, whatever order they finished in.
    expect(toolMessages(model, 1).map((message) => message.content)).toEqual(['1', '2', '3', '4', '5']);
  });

  it('stops running tools past maxToolCalls and tells the model instead of failing', async () => {
    let executed = 0;
    const count = defineTool({
      name: 'count',
      description: 'd',
      input: Type.Object({}),
      execute: () => ++executed,
    });
    const model = new ScriptedModel([
      { toolCalls: [1, 2, 3].map(() => ({ name: 'count', input: {} })) },
      { text: 'stopped' },
    ]);
    const run = await defineAgent({ name: 's', model, tools: [count], limits: { maxToolCalls: 2 } }).ask(
      '?',
      {
        runtime,
      },
    );
    expect(executed).toBe(2);
    expect(toolMessages(model, 1)[2]?.content).toMatch(/reached its limit of 2 tool calls/);
    expect(run.outcome).toBe('completed');
  });

  it('fails the run when the model keeps calling tools past maxTurns', async () => {
    const model = new ScriptedModel(
      Array.from({ length: 3 }, () => ({
        toolCalls: [{ name: 'help_center_lookup', input: { topic: 'refunds' } }],
      })),
    );
    const run = await defineAgent({ name: 's', model, tools: [lookup], limits: { maxTurns: 3 } }).ask('?', {
      runtime,
    });
    expect(run.outcome).toBe('failed');
    expect(run.error?.name).toBe('AgentLimitError');
    expect(run.error?.message).toMatch(/all 3 turns/);
  });

  it('fails clearly when a scripted model is called more often than scripted', async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'help_center_lookup', input: { topic: 'refunds' } }] },
    ]);
    const run = await defineAgent({ name: 's', model, tools: [lookup] }).ask('?', { runtime });
    expect(run.failed).toBe(true);
    expect(run.error?.name).toBe('ScriptedModelError');
    expect(run.error?.message).toMatch(/called 2 times but has only 1 step/);
    const unused = new ScriptedModel([{ text: 'a' }, { text: 'b' }]);
    await defineAgent({ name: 's', model: unused }).ask('?', { runtime });
    expect(() => unused.assertConsumed()).toThrow(/1 unused step/);
  });

  it('fails the run with a ModelError when the model stream breaks', async () => {
    const model = new MockModel({
      stream: () => ({
        async *[Symbol.asyncIterator]() {
          yield { type: 'text-delta' as const, text: 'Hel' };
          throw new Error('connection reset');
        },
      }),
    });
    const run = await defineAgent({ name: 's', model }).ask('?', { runtime });
    expect(run.outcome).toBe('failed');
    expect(run.error?.name).toBe('ModelError');
    expect(run.error?.message).toMatch(/mock:mock-model failed on turn 1: connection reset/);
  });
});

describe('agent.streamAsk', () => {
  it('streams the spec events in order, frozen, with exactly one terminal event last', async () => {
    const model = new ScriptedModel([
      {
        toolCalls: [{ id: 't1', name: 'help_center_lookup', input: { topic: 'shipping' } }],
        usage: { inputTokens: 3 },
      },
      { reasoning: 'Answer now.', text: ['Orders ship ', 'within 2 days.'] },
    ]);
    const stream = defineAgent({ name: 'support', model, tools: [lookup] }).streamAsk('When?', { runtime });
    const events = await collect(stream);
    const run = await stream.run;
    expect(events.map((event) => event.type)).toEqual([
      'run_start',
      'invocation_start',
      'model_start',
      'tool_call_start',
      'tool_call_delta',
      'tool_call_stop',
      'usage',
      'model_stop',
      'tool_start',
      'tool_stop',
      'model_start',
      'reasoning_delta',
      'text_delta',
      'text_delta',
      'model_stop',
      'invocation_stop',
      'run_stop',
    ]);
    for (const event of events) {
      expect(Object.isFrozen(event)).toBe(true);
      expect(Object.isFrozen(event.data)).toBe(true);
      expect(event.runId).toBe(run.operationId);
    }
    const toolStop = events.find((event) => event.type === 'tool_stop');
    expect(toolStop?.data).toMatchObject({
      toolCallId: 't1',
      toolName: 'help_center_lookup',
      status: 'success',
    });
    expect(events.at(-1)).toMatchObject({
      type: 'run_stop',
      data: { response: 'Orders ship within 2 days.' },
    });
    expect(run.response).toBe('Orders ship within 2 days.');
  });

  it('cancels mid-stream: cancelled, empty response, run_cancel last', async () => {
    const controller = new AbortController();
    const model = new ScriptedModel([{ text: ['one ', 'two ', 'three ', 'four'], delayMs: 20 }]);
    const stream = defineAgent({ name: 's', model }).streamAsk('?', { runtime, signal: controller.signal });
    const events: StreamEvent[] = [];
    for await (const event of stream) {
      events.push(event);
      if (event.type === 'text_delta') controller.abort();
    }
    const run = await stream.run;
    expect(run.outcome).toBe('cancelled');
    expect(run.cancelled).toBe(true);
    expect(run.response).toBe('');
    expect(run.error?.name).toBe('CancelledError');
    expect(events.at(-1)?.type).toBe('run_cancel');
    expect(
      events.filter((event) => event.type.startsWith('run_') && event.type !== 'run_start'),
    ).toHaveLength(1);
  });

  it('cancels in the middle of a tool: its signal fires and the run ends cancelled', async () => {
    const controller = new AbortController();
    let toolSignal: AbortSignal | undefined;
    const slow = defineTool({
      name: 'slow',
      description: 'd',
      input: Type.Object({}),
      execute: (_input, { signal }) => {
        toolSignal = signal;
        setTimeout(() => controller.abort(), 10);
        return new Promise((resolve) => {
          const timer = setTimeout(() => resolve('finished'), 5_000);
          signal.addEventListener('abort', () => clearTimeout(timer));
        });
      },
    });
    const model = new ScriptedModel([{ toolCalls: [{ name: 'slow', input: {} }] }, { text: 'never' }]);
    const run = await defineAgent({ name: 's', model, tools: [slow] }).ask('?', {
      runtime,
      signal: controller.signal,
    });
    expect(run.outcome).toBe('cancelled');
    expect(toolSignal?.aborted).toBe(true);
    expect(model.calls).toHaveLength(1);
  });

  it('ends at the deadline as partial, keeping the text produced so far', async () => {
    const model = new ScriptedModel([
      { text: ['Refunds ', 'take ', 'five ', 'business ', 'days.'], delayMs: 40 },
    ]);
    const stream = defineAgent({ name: 's', model }).streamAsk('?', { runtime, timeoutMs: 100 });
    const events = await collect(stream);
    const run = await stream.run;
    expect(run.outcome).toBe('partial');
    expect(run.partial).toBe(true);
    expect(run.error?.name).toBe('DeadlineExceededError');
    expect(run.response.length).toBeGreaterThan(0);
    expect('Refunds take five business days.'.startsWith(run.response)).toBe(true);
    expect(run.response).not.toBe('Refunds take five business days.');
    expect(events.at(-1)).toMatchObject({ type: 'run_partial', data: { response: run.response } });
  });

  it('cancels the run when the consumer stops reading early', async () => {
    const model = new ScriptedModel([{ text: ['a', 'b', 'c'], delayMs: 10 }]);
    const stream = defineAgent({ name: 's', model }).streamAsk('?', { runtime });
    for await (const event of stream) {
      if (event.type === 'text_delta') break;
    }
    const run = await stream.run;
    expect(run.outcome).toBe('cancelled');
  });

  it('is already cancelled when the signal was aborted before the start', async () => {
    const model = new ScriptedModel([{ text: 'hi' }]);
    const run = await defineAgent({ name: 's', model }).ask('?', { runtime, signal: AbortSignal.abort() });
    expect(run.outcome).toBe('cancelled');
    expect(model.calls).toHaveLength(0);
  });
});
