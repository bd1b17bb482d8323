import { type Event as AgUiEvent, EventType, type Message } from '@ag-ui/core';
import { CancelledError, defineAgent, defineTool, type ModelStreamPart, ToolError } from '@ghost/core';
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

  it('needs a thread id', () => {
    expect(() => new AgUiEventMapper({ threadId: '' })).toThrow(/non-empty threadId/);
  });
});
