import { type Event as AgUiEvent, EventType, type Message } from '@ag-ui/core';
import { CancelledError, defineAgent, defineTool, ToolError } from '@ghost/core';
import type { ModelStreamPart } from '@ghost/core/provider';
import { MockModel, ScriptedModel } from '@ghost/core/testing';
import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { AgUiEventMapper } from './ag-ui-event-mapper.js';
import { conversationFromAgUi } from './conversation-from-ag-ui.js';
import { checkedEvents, ofType } from './test-support/checked-events.js';
import { toAgUiEvents } from './to-ag-ui-events.js';

const lookup = defineTool({
  name: 'help_center_lookup',
  description: 'Returns the help-center entry for a topic.',
  input: Type.Object({ topic: Type.String() }),
  execute: ({ topic }) => {
    if (topic !== 'refunds') throw new ToolError(`No entry for '${topic}'.`);
    return { topic, text: 'Refunds take 5 business days.' };
  },
});

async function collect(iterable: AsyncIterable<AgUiEvent>): Promise<AgUiEvent[]> {
  const events: AgUiEvent[] = [];
  for await (const event of iterable) events.push(event);
  return events;
}

function snapshotOf(events: readonly AgUiEvent[]): Message[] {
  const [snapshot] = ofType(events, EventType.MESSAGES_SNAPSHOT);
  if (!snapshot) throw new Error('no MESSAGES_SNAPSHOT');
  return snapshot.messages;
}

const input: Message[] = [{ id: 'user-1', role: 'user', content: 'How long do refunds take?' }];

describe('toAgUiEvents', () => {
  it('maps a run with reasoning, text and tool calls to events a client accepts, ending with the conversation', async () => {
    const model = new ScriptedModel([
      {
        reasoning: 'The help center knows.',
        text: 'Let me check.',
        toolCalls: [
          { name: 'help_center_lookup', input: { topic: 'refunds' } },
          { name: 'help_center_lookup', input: { topic: 'shipping' } },
        ],
        usage: { inputTokens: 100, outputTokens: 20, cacheReadTokens: 40 },
      },
      { text: ['Refunds take ', '5 business days.'], usage: { inputTokens: 150, outputTokens: 10 } },
    ]);
    const agent = defineAgent({ name: 'support', model, tools: [lookup] });
    const stream = agent.streamAsk(conversationFromAgUi(input));
    const events = await checkedEvents(
      await collect(toAgUiEvents(stream, { threadId: 'thread-1', runId: 'run-1', inputMessages: input })),
    );
    const run = await stream.run;

    expect(events.map((event) => event.type)).toEqual([
      'RUN_STARTED',
      'STEP_STARTED',
      'REASONING_START',
      'REASONING_MESSAGE_START',
      'REASONING_MESSAGE_CONTENT',
      'REASONING_MESSAGE_END',
      'REASONING_END',
      'TEXT_MESSAGE_START',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_END',
      'TOOL_CALL_START',
      'TOOL_CALL_ARGS',
      'TOOL_CALL_END',
      'TOOL_CALL_START',
      'TOOL_CALL_ARGS',
      'TOOL_CALL_END',
      'TOOL_CALL_RESULT',
      'TOOL_CALL_RESULT',
      'STEP_FINISHED',
      'STEP_STARTED',
      'TEXT_MESSAGE_START',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_END',
      'STEP_FINISHED',
      'MESSAGES_SNAPSHOT',
      'RUN_FINISHED',
    ]);
    expect(events[0]).toMatchObject({ threadId: 'thread-1', runId: 'run-1', protocolVersion: '1.0' });
    expect(ofType(events, EventType.STEP_STARTED).map((event) => event.stepName)).toEqual([
      'turn-1',
      'turn-2',
    ]);
    const [firstText, secondText] = ofType(events, EventType.TEXT_MESSAGE_START);
    expect(firstText?.messageId).not.toBe(secondText?.messageId);
    for (const start of ofType(events, EventType.TOOL_CALL_START)) {
      expect(start.parentMessageId).toBe(firstText?.messageId);
      expect(start.toolCallName).toBe('help_center_lookup');
    }
    // The two calls run concurrently, so their results come in either order.
    const resultOf = (toolCallId: string) =>
      ofType(events, EventType.TOOL_CALL_RESULT).find((result) => result.toolCallId === toolCallId);
    const found = resultOf('call_1_1');
    const missing = resultOf('call_1_2');
    expect(found?.content).toBe(JSON.stringify({ topic: 'refunds', text: 'Refunds take 5 business days.' }));
    expect(found?.metadata).toBeUndefined();
    expect(missing?.content).toBe("No entry for 'shipping'.");
    expect(missing?.metadata).toEqual({ ghost: { isError: true } });
    expect(ofType(events, EventType.RUN_FINISHED)[0]).toMatchObject({
      threadId: 'thread-1',
      runId: 'run-1',
      outcome: { type: 'success' },
      usage: [
        {
          provider: 'scripted',
          model: 'scripted-model',
          inputTokens: 250,
          outputTokens: 30,
          totalTokens: 280,
          cachedInputTokens: 40,
        },
      ],
    });

    // The snapshot keeps the client's ids, and converts back to exactly the run's conversation.
    const snapshot = snapshotOf(events);
    expect(snapshot.map((message) => message.role)).toEqual([
      'user',
      'reasoning',
      'assistant',
      'tool',
      'tool',
      'assistant',
    ]);
    expect(snapshot[0]).toEqual(input[0]);
    expect(snapshot[1]?.id).toBe(ofType(events, EventType.REASONING_MESSAGE_START)[0]?.messageId);
    expect(snapshot[2]?.id).toBe(firstText?.messageId);
    expect(snapshot[3]).toMatchObject({ id: found?.messageId, toolCallId: 'call_1_1' });
    expect(snapshot[4]).toMatchObject({
      id: missing?.messageId,
      toolCallId: 'call_1_2',
      error: "No entry for 'shipping'.",
    });
    expect(snapshot[5]).toMatchObject({
      id: secondText?.messageId,
      content: 'Refunds take 5 business days.',
    });
    expect(conversationFromAgUi(snapshot)).toEqual(run.messages);
  });

  it('a failed run ends with RUN_ERROR and its code, keeping the text the client was shown', async () => {
    const model = new MockModel({
      stream: async function* (): AsyncGenerator<ModelStreamPart> {
        yield { type: 'text-delta', text: 'Half an ans' };
        throw new Error('connection reset');
      },
    });
    const agent = defineAgent({ name: 'support', model });
    const stream = agent.streamAsk(conversationFromAgUi(input));
    const events = await checkedEvents(
      await collect(toAgUiEvents(stream, { threadId: 'thread-1', inputMessages: input })),
    );
    expect(events.map((event) => event.type).slice(-4)).toEqual([
      'TEXT_MESSAGE_END',
      'STEP_FINISHED',
      'MESSAGES_SNAPSHOT',
      'RUN_ERROR',
    ]);
    const error = ofType(events, EventType.RUN_ERROR)[0];
    expect(error).toMatchObject({ code: 'MODEL_FAILED', metadata: { ghost: { outcome: 'failed' } } });
    expect(error?.message).toContain('connection reset');
    // The run id defaults to Ghost's.
    expect(events[0]).toMatchObject({ runId: (await stream.run).operationId });
    const snapshot = snapshotOf(events);
    expect(snapshot).toEqual([
      input[0],
      {
        id: ofType(events, EventType.TEXT_MESSAGE_START)[0]?.messageId,
        role: 'assistant',
        content: 'Half an ans',
      },
    ]);
  });

  it('a run out of time ends with RUN_ERROR RUN_DEADLINE_EXCEEDED, outcome partial, its text kept', async () => {
    const model = new MockModel({
      stream: async function* (_request, { signal }): AsyncGenerator<ModelStreamPart> {
        yield { type: 'text-delta', text: 'So far: ' };
        await new Promise((resolve) => signal?.addEventListener('abort', resolve, { once: true }));
      },
    });
    const agent = defineAgent({ name: 'support', model });
    const stream = agent.streamAsk(conversationFromAgUi(input), { timeoutMs: 50 });
    const events = await checkedEvents(
      await collect(toAgUiEvents(stream, { threadId: 'thread-1', inputMessages: input })),
    );
    expect((await stream.run).outcome).toBe('partial');
    expect(ofType(events, EventType.RUN_ERROR)[0]).toMatchObject({
      code: 'RUN_DEADLINE_EXCEEDED',
      metadata: { ghost: { outcome: 'partial' } },
    });
    expect(snapshotOf(events).at(-1)).toMatchObject({ role: 'assistant', content: 'So far: ' });
  });

  it('a cancelled run ends with RUN_FINISHED, outcome cancelled, with every message and call closed', async () => {
    const controller = new AbortController();
    const model = new MockModel({
      stream: async function* (_request, { signal }): AsyncGenerator<ModelStreamPart> {
        yield { type: 'reasoning-delta', text: 'Thinking' };
        yield { type: 'tool-call-start', index: 0, id: 'call-1', name: 'help_center_lookup' };
        yield { type: 'tool-call-delta', index: 0, argumentsDelta: '{"topic":' };
        controller.abort(new CancelledError('The user pressed stop.'));
        await new Promise((resolve) => signal?.addEventListener('abort', resolve, { once: true }));
      },
    });
    const agent = defineAgent({ name: 'support', model, tools: [lookup] });
    const stream = agent.streamAsk('hello', { signal: controller.signal });
    const events = await checkedEvents(await collect(toAgUiEvents(stream, { threadId: 'thread-1' })));
    expect((await stream.run).outcome).toBe('cancelled');
    expect(events.map((event) => event.type)).toEqual([
      'RUN_STARTED',
      'STEP_STARTED',
      'REASONING_START',
      'REASONING_MESSAGE_START',
      'REASONING_MESSAGE_CONTENT',
      'REASONING_MESSAGE_END',
      'REASONING_END',
      'TOOL_CALL_START',
      'TOOL_CALL_ARGS',
      'TOOL_CALL_END',
      'STEP_FINISHED',
      'MESSAGES_SNAPSHOT',
      'RUN_FINISHED',
    ]);
    expect(ofType(events, EventType.RUN_FINISHED)[0]?.outcome).toEqual({ type: 'cancelled' });
    // Without the client's messages, the snapshot renders the input too (with new ids).
    const snapshot = snapshotOf(events);
    expect(snapshot.map((message) => message.role)).toEqual(['user', 'reasoning']);
    expect(snapshot[0]).toMatchObject({ content: 'hello' });
  });

  it('gives the structured output as RUN_FINISHED result, and can leave the snapshot out', async () => {
    const model = new ScriptedModel([{ text: '{"days":5}' }]);
    const agent = defineAgent({ name: 'support', model, output: Type.Object({ days: Type.Integer() }) });
    const stream = agent.streamAsk('How many days?');
    const events = await checkedEvents(
      await collect(toAgUiEvents(stream, { threadId: 'thread-1', messagesSnapshot: false })),
    );
    expect(ofType(events, EventType.MESSAGES_SNAPSHOT)).toEqual([]);
    expect(ofType(events, EventType.RUN_FINISHED)[0]?.result).toEqual({ days: 5 });
  });

  it('shows nested agents (includeAgentEvents) as subagents with their own attributed text, kept out of the conversation', async () => {
    const researcher = defineAgent({
      name: 'researcher',
      model: new ScriptedModel([
        {
          text: 'Checking the help center.',
          toolCalls: [{ name: 'help_center_lookup', input: { topic: 'refunds' } }],
        },
        { text: ['Refunds take ', '5 business days.'] },
      ]),
      tools: [lookup],
    });
    const failing = defineAgent({
      name: 'checker',
      model: new MockModel({
        // biome-ignore lint/correctness/useYield: a model that fails before its first part
        stream: async function* () {
          throw new Error('connection reset');
        },
      }),
    });
    const model = new ScriptedModel([
      {
        text: 'Asking.',
        toolCalls: [
          { id: 'call_research', name: 'researcher', input: { input: 'How long do refunds take?' } },
          { id: 'call_check', name: 'checker', input: { input: 'Check it.' } },
        ],
      },
      { text: 'Five business days.' },
    ]);
    const agent = defineAgent({
      name: 'support',
      model,
      tools: [researcher.asTool(), failing.asTool()],
      limits: { maxParallelToolCalls: 1 },
    });
    const stream = agent.streamAsk(conversationFromAgUi(input), { includeAgentEvents: true });
    const events = await checkedEvents(
      await collect(toAgUiEvents(stream, { threadId: 'thread-1', inputMessages: input })),
    );
    const run = await stream.run;
    expect(run.outcome).toBe('completed');

    const [researchStarted, checkStarted] = ofType(events, EventType.SUBAGENT_STARTED);
    expect(researchStarted).toMatchObject({ name: 'researcher', parentToolCallId: 'call_research' });
    expect(checkStarted).toMatchObject({ name: 'checker', parentToolCallId: 'call_check' });
    const researchId = researchStarted?.subagentRunId;
    // Each of the researcher's turns is a text message of its own, attributed to it.
    const subagentTexts = ofType(events, EventType.TEXT_MESSAGE_START).filter(
      (event) => event.subagentRunId === researchId,
    );
    expect(subagentTexts).toHaveLength(2);
    expect(subagentTexts.every((event) => event.name === 'researcher' && event.role === 'assistant')).toBe(
      true,
    );
    const contents = ofType(events, EventType.TEXT_MESSAGE_CONTENT);
    expect(
      contents.filter((event) => event.subagentRunId === researchId).map((event) => event.delta),
    ).toEqual(['Checking the help center.', 'Refunds take ', '5 business days.']);
    // The run's own text is not mixed with it.
    expect(contents.filter((event) => event.subagentRunId === undefined).map((event) => event.delta)).toEqual(
      ['Asking.', 'Five business days.'],
    );
    expect(ofType(events, EventType.SUBAGENT_FINISHED)).toEqual([
      expect.objectContaining({ subagentRunId: researchId, outcome: { type: 'success' } }),
    ]);
    expect(ofType(events, EventType.SUBAGENT_ERROR)).toEqual([
      expect.objectContaining({
        subagentRunId: checkStarted?.subagentRunId,
        code: 'MODEL_FAILED',
        message: 'Model mock:mock-model failed on turn 1: connection reset',
      }),
    ]);

    // The snapshot keeps the researcher's text before the result of the call that ran it; sent
    // back, it is left out, and the conversation is exactly the run's.
    const snapshot = snapshotOf(events);
    expect(
      snapshot.map((message) => `${message.role}${message.subagentRunId === undefined ? '' : ' (subagent)'}`),
    ).toEqual([
      'user',
      'assistant',
      'assistant (subagent)',
      'assistant (subagent)',
      'tool',
      'tool',
      'assistant',
    ]);
    expect(snapshot[2]).toMatchObject({
      id: subagentTexts[0]?.messageId,
      content: 'Checking the help center.',
      name: 'researcher',
      subagentRunId: researchId,
    });
    expect(snapshot[4]).toMatchObject({
      toolCallId: 'call_research',
      content: 'Refunds take 5 business days.',
    });
    expect(conversationFromAgUi(snapshot)).toEqual(run.messages);
  });

  it('shows a model-directed subagent’s lifecycle as ghost.subagent CUSTOM events', async () => {
    const researcher = defineAgent({ name: 'researcher', model: new ScriptedModel([{ text: 'Found it.' }]) });
    const lead = defineAgent({
      name: 'lead',
      model: new ScriptedModel([
        {
          toolCalls: [
            {
              name: 'spawn_subagent',
              input: { kind: 'researcher', task_name: 'look', task: 'Look it up.', mode: 'sync' },
            },
          ],
        },
        { text: 'Done.' },
      ]),
      subagents: [{ agent: researcher, description: 'Looks things up.' }],
    });
    const stream = lead.streamAsk(conversationFromAgUi(input));
    const events = await checkedEvents(
      await collect(toAgUiEvents(stream, { threadId: 'thread-1', runId: 'run-1', inputMessages: input })),
    );
    const custom = ofType(events, EventType.CUSTOM).filter((event) => event.name === 'ghost.subagent');
    expect(custom.map((event) => (event.value as { phase: string }).phase)).toEqual([
      'spawned',
      'turn_started',
      'turn_finished',
    ]);
    expect(custom[2]?.value).toMatchObject({ subagentId: 'look', kind: 'researcher', response: 'Found it.' });
  });

  it('ignores nested agents’ events for a run streamed without includeAgentEvents', async () => {
    const researcher = defineAgent({ name: 'researcher', model: new ScriptedModel([{ text: 'Found.' }]) });
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'researcher', input: { input: 'dig' } }] },
      { text: 'Done.' },
    ]);
    const agent = defineAgent({ name: 'support', model, tools: [researcher.asTool()] });
    const events = await checkedEvents(
      await collect(toAgUiEvents(agent.streamAsk('go'), { threadId: 'thread-1' })),
    );
    expect(ofType(events, EventType.SUBAGENT_STARTED)).toEqual([]);
    expect(ofType(events, EventType.TEXT_MESSAGE_CONTENT).map((event) => event.delta)).toEqual(['Done.']);
  });

  it('needs a thread id', () => {
    expect(() => new AgUiEventMapper({ threadId: '' })).toThrow(/non-empty threadId/);
  });
});
