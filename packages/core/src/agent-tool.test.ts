import Type from 'typebox';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defineAgent } from './agent.js';
import { ConfigurationError, ToolError } from './errors.js';
import type { ModelRequest } from './model.js';
import { createRuntime } from './runtime.js';
import type { StreamEvent, StreamEventOf } from './stream-event.js';
import { MockModel } from './testing/mock-model.js';
import { countOpenHandles, newOpenHandles } from './testing/open-handles.js';
import { ScriptedModel } from './testing/scripted-model.js';
import { defineTool } from './tool.js';

const runtime = createRuntime();

let handlesBefore: Map<string, number>;
beforeEach(() => {
  handlesBefore = countOpenHandles();
});
afterEach(async () => {
  expect(await newOpenHandles(handlesBefore)).toEqual([]);
});

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** The tool results the model read on its `call`-th request. */
function toolResults(requests: readonly ModelRequest[], call: number) {
  return (requests[call]?.messages ?? []).filter((message) => message.role === 'tool');
}

const askResearcher = (input: unknown, id = 'c1') => ({
  toolCalls: [{ id, name: 'researcher', input }],
});

describe('agent.asTool', () => {
  it('is a tool named after the agent, taking { input }, whose call answers with the agent’s text', async () => {
    const researcherModel = new ScriptedModel([{ text: 'Lisbon was founded before Rome.' }]);
    const researcher = defineAgent({
      name: 'researcher',
      instructions: 'Find facts.',
      model: researcherModel,
    });
    const tool = researcher.asTool();
    expect(tool.name).toBe('researcher');
    expect(tool.description).toMatch(/^Asks the agent 'researcher' and returns its answer\./);
    expect(tool.inputJsonSchema).toMatchObject({
      type: 'object',
      required: ['input'],
      properties: { input: { type: 'string' } },
    });
    expect(tool.validateInput({ input: 'x' })).toEqual([]);
    expect(tool.validateInput({ query: 'x' })).not.toEqual([]);

    const writerModel = new ScriptedModel([
      askResearcher({ input: 'How old is Lisbon?' }),
      { text: 'Very old.' },
    ]);
    const writer = defineAgent({ name: 'writer', model: writerModel, tools: [tool] });
    const run = await writer.ask('Write about Lisbon.', {
      runtime,
      actorId: 'user-7',
      context: { tenant: 'acme' },
    });

    expect(run.outcome).toBe('completed');
    expect(run.response).toBe('Very old.');
    expect(toolResults(writerModel.calls, 1)).toEqual([
      { role: 'tool', toolCallId: 'c1', toolName: 'researcher', content: 'Lisbon was founded before Rome.' },
    ]);
    // The agent sees its own instructions and only the input it was given.
    expect(researcherModel.calls[0]?.instructions).toBe('Find facts.');
    expect(researcherModel.calls[0]?.messages).toEqual([{ role: 'user', content: 'How old is Lisbon?' }]);
    // The writer's conversation holds the call and its result; the researcher's turns are not in it.
    expect(run.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('runs the agent in the caller’s run: same run id, actor, context and state, its own invocation', async () => {
    const seen: Record<string, unknown>[] = [];
    const whoAmI = defineTool({
      name: 'who_am_i',
      description: 'Says what the run holds.',
      input: Type.Object({}),
      execute: (_input, { run }) => {
        run.state.visits = ((run.state.visits as number | undefined) ?? 0) + 1;
        seen.push({
          runId: run.invocation.runId,
          invocationId: run.invocation.invocationId,
          agentName: run.invocation.agentName,
          input: run.invocation.input,
          actorId: run.invocation.actorId,
          tenant: run.invocation.context.tenant,
          visits: run.state.visits,
        });
        return 'ok';
      },
    });
    const researcher = defineAgent({
      name: 'researcher',
      model: new ScriptedModel([{ toolCalls: [{ name: 'who_am_i', input: {} }] }, { text: 'found' }]),
      tools: [whoAmI],
    });
    const writer = defineAgent({
      name: 'writer',
      model: new ScriptedModel([
        { toolCalls: [{ name: 'who_am_i', input: {} }] },
        askResearcher({ input: 'dig' }),
        { text: 'done' },
      ]),
      tools: [whoAmI, researcher.asTool()],
    });
    const run = await writer.ask('go', { runtime, actorId: 'user-7', context: { tenant: 'acme' } });
    expect(run.outcome).toBe('completed');
    const [outer, inner] = seen;
    expect(outer).toMatchObject({
      agentName: 'writer',
      input: 'go',
      actorId: 'user-7',
      tenant: 'acme',
      visits: 1,
    });
    expect(inner).toMatchObject({
      agentName: 'researcher',
      input: 'dig',
      actorId: 'user-7',
      tenant: 'acme',
      visits: 2,
    });
    expect(inner?.runId).toBe(run.operationId);
    expect(outer?.runId).toBe(run.operationId);
    expect(inner?.invocationId).not.toBe(outer?.invocationId);
    expect(run.invocation.invocationId).toBe(outer?.invocationId);
  });

  it('takes a name, a description and a timeout, and refuses what a tool cannot be', () => {
    const agent = defineAgent({ name: 'Research Agent (EU)', model: new ScriptedModel([]) });
    expect(agent.asTool().name).toBe('Research_Agent__EU_');
    const named = agent.asTool({ name: 'research', description: 'Finds sources.', timeoutMs: 5_000 });
    expect(named).toMatchObject({ name: 'research', description: 'Finds sources.', timeoutMs: 5_000 });
    expect(agent.asTool().timeoutMs).toBe(600_000);
    expect(defineAgent({ name: 'x'.repeat(80), model: new ScriptedModel([]) }).asTool().name).toHaveLength(
      64,
    );
    expect(() => agent.asTool({ name: 'no spaces' })).toThrow(
      expect.objectContaining({ code: 'TOOL_NAME_INVALID' }),
    );
    expect(() => agent.asTool({ timeoutMs: 0 })).toThrow(
      expect.objectContaining({ code: 'TOOL_TIMEOUT_INVALID' }),
    );
    expect(() => agent.asTool({ description: 3 as unknown as string })).toThrow(
      expect.objectContaining({ code: 'TOOL_DESCRIPTION_MISSING' }),
    );
    expect(() => agent.asTool({ instructions: 'x' } as never)).toThrow(ConfigurationError);
    expect(() => agent.asTool({ instructions: 'x' } as never)).toThrow(/no option 'instructions'/);
  });

  it('gives the model a tool error when the agent does not answer, and the run goes on', async () => {
    const failing = defineAgent({
      name: 'researcher',
      model: new MockModel({
        // biome-ignore lint/correctness/useYield: a model that fails before its first part
        stream: async function* () {
          throw new Error('connection reset');
        },
      }),
    });
    const looping = defineAgent({
      name: 'looper',
      limits: { maxTurns: 1 },
      model: new ScriptedModel([{ toolCalls: [{ name: 'nothing', input: {} }] }]),
      tools: [
        defineTool({ name: 'nothing', description: 'No-op.', input: Type.Object({}), execute: () => null }),
      ],
    });
    const writerModel = new ScriptedModel([
      {
        toolCalls: [
          { id: 'c1', name: 'researcher', input: { input: 'a' } },
          { id: 'c2', name: 'looper', input: { input: 'b' } },
        ],
      },
      { text: 'I will answer myself.' },
    ]);
    const writer = defineAgent({
      name: 'writer',
      model: writerModel,
      tools: [failing.asTool(), looping.asTool()],
    });
    const stream = writer.streamAsk('go', { runtime, includeAgentEvents: true });
    const events = await collect(stream);
    const run = await stream.run;

    expect(run.outcome).toBe('completed');
    expect(toolResults(writerModel.calls, 1)).toEqual([
      {
        role: 'tool',
        toolCallId: 'c1',
        toolName: 'researcher',
        isError: true,
        content:
          "Agent 'researcher' did not answer: Model mock:mock-model failed on turn 1: connection reset",
      },
      {
        role: 'tool',
        toolCallId: 'c2',
        toolName: 'looper',
        isError: true,
        content: expect.stringMatching(/^Agent 'looper' did not answer: Agent 'looper' used all 1 turns/),
      },
    ]);
    const stops = events.filter((event): event is StreamEventOf<'tool_stop'> => event.type === 'tool_stop');
    expect(stops.map((stop) => stop.data.error)).toEqual([
      expect.objectContaining({ name: 'ToolError', code: 'AGENT_TOOL_FAILED' }),
      expect.objectContaining({ name: 'ToolError', code: 'AGENT_TOOL_FAILED' }),
    ]);
    // The agent's own end says what failed, with its own code.
    const innerErrors = events.flatMap((event) =>
      event.type === 'agent_stream' && event.data.event.type === 'invocation_error'
        ? [event.data.event.data]
        : [],
    );
    expect(innerErrors).toEqual([
      expect.objectContaining({
        agentName: 'researcher',
        outcome: 'failed',
        error: expect.objectContaining({ code: 'MODEL_FAILED' }),
      }),
      expect.objectContaining({
        agentName: 'looper',
        outcome: 'failed',
        error: expect.objectContaining({ code: 'AGENT_LIMIT_REACHED' }),
      }),
    ]);
  });

  it('stops the agent when its call times out, and the model is told the call timed out', async () => {
    let innerSignal: AbortSignal | undefined;
    const slow = defineAgent({
      name: 'researcher',
      model: new MockModel({
        stream: async function* (_request, options) {
          innerSignal = options.signal;
          await new Promise((_resolve, reject) => {
            options.signal.addEventListener('abort', () => reject(options.signal.reason), { once: true });
          });
          yield { type: 'finish', reason: 'stop' };
        },
      }),
    });
    const writerModel = new ScriptedModel([askResearcher({ input: 'dig' }), { text: 'Gave up waiting.' }]);
    const writer = defineAgent({
      name: 'writer',
      model: writerModel,
      tools: [slow.asTool({ timeoutMs: 50 })],
    });
    const stream = writer.streamAsk('go', { runtime, includeAgentEvents: true });
    const events = await collect(stream);
    const run = await stream.run;
    expect(run.outcome).toBe('completed');
    expect(innerSignal?.aborted).toBe(true);
    expect(toolResults(writerModel.calls, 1)[0]).toMatchObject({
      isError: true,
      content: "Tool 'researcher' timed out after 50 ms.",
    });
    const innerEnd = events.find(
      (event) => event.type === 'agent_stream' && event.data.event.type === 'invocation_error',
    );
    expect(innerEnd?.type === 'agent_stream' && innerEnd.data.event.data).toMatchObject({
      outcome: 'cancelled',
      error: { code: 'TOOL_TIMEOUT' },
    });
  });

  it('fails with a tool error when called outside a running agent', async () => {
    const tool = defineAgent({ name: 'researcher', model: new ScriptedModel([]) }).asTool();
    const run = defineAgent({ name: 'other', model: new ScriptedModel([{ text: 'x' }]) }).createRun('?', {
      runtime,
    });
    const context = { signal: new AbortController().signal, toolCallId: 'c1', run: run.context() };
    const failure = await Promise.resolve(tool.execute({ input: 'x' }, context)).catch(
      (error: unknown) => error,
    );
    expect(ToolError.isInstance(failure)).toBe(true);
    expect((failure as ToolError).message).toMatch(/only from a tool call of a running agent/);
    await run.close();
  });
});
