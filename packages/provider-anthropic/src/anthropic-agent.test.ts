import { createRuntime, defineAgent, defineTool, type StreamEvent } from '@ghost/core';
import Type from 'typebox';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAnthropic } from './anthropic-provider.js';
import { answer, errorBody, MessagesServer } from './test-support/messages-server.js';

let server: MessagesServer;
const runtime = createRuntime();

beforeEach(async () => {
  server = await MessagesServer.start();
});

afterEach(async () => {
  await server.close();
});

function claude(settings: Parameters<typeof createAnthropic>[0] = {}) {
  return createAnthropic({ apiKey: 'test-key', baseURL: server.baseURL, ...settings })('claude-sonnet-4-5');
}

const orders = defineTool({
  name: 'order_status',
  description: 'The status of an order.',
  input: Type.Object({ order: Type.String() }),
  execute: ({ order }) => ({ order, status: 'shipped', carrier: 'DHL' }),
});

describe('a conversation with thinking on', () => {
  it('sends every signed thinking block back unchanged, turn after turn and across asks', async () => {
    server.enqueue(
      answer([
        { type: 'thinking', deltas: ['The user wants order 42. ', 'Look it up.'], signature: 'sig-turn-1==' },
        { type: 'redacted_thinking', data: 'EqQBCkgIARABGAIiQL-redacted' },
        { type: 'tool_use', id: 'toolu_order', name: 'order_status', json: ['{"order":"42"}'] },
      ]),
      answer([
        { type: 'thinking', deltas: ['It shipped.'], signature: 'sig-turn-2==' },
        { type: 'text', deltas: ['Order 42 has shipped with DHL.'] },
      ]),
      answer([{ type: 'text', deltas: ['DHL usually takes two days.'] }]),
    );
    const agent = defineAgent({
      name: 'support',
      instructions: 'Help with orders.',
      model: claude(),
      tools: [orders],
      providerOptions: { anthropic: { thinking: { type: 'enabled', budget_tokens: 1024 } } },
    });

    const first = await agent.ask('Where is order 42?', { runtime });
    expect(first.outcome).toBe('completed');
    expect(first.response).toBe('Order 42 has shipped with DHL.');
    const firstTurn = {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'The user wants order 42. Look it up.', signature: 'sig-turn-1==' },
        { type: 'redacted_thinking', data: 'EqQBCkgIARABGAIiQL-redacted' },
        { type: 'tool_use', id: 'toolu_order', name: 'order_status', input: { order: '42' } },
      ],
    };
    // The tool loop's second request: the API rejects it when thinking is on and these are missing.
    expect(server.requests[1]?.body.messages[1]).toEqual(firstTurn);

    const second = await agent.ask(
      [...first.messages, { role: 'user', content: 'And how long will it take?' }],
      {
        runtime,
      },
    );
    expect(second.response).toBe('DHL usually takes two days.');
    const sent = server.requests[2]?.body;
    expect(sent.messages.map((message: { role: string }) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
    ]);
    expect(sent.messages[1]).toEqual(firstTurn);
    expect(sent.messages[2].content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_order' });
    expect(sent.messages[3]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'It shipped.', signature: 'sig-turn-2==' },
        { type: 'text', text: 'Order 42 has shipped with DHL.' },
      ],
    });
    expect(sent.messages[4].content).toEqual([
      { type: 'text', text: 'And how long will it take?', cache_control: { type: 'ephemeral' } },
    ]);
    for (const request of server.requests) {
      expect(request.body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
    }
  });
});

describe('structured output', () => {
  it('asks for the schema with output_config.format and repairs a wrong answer once', async () => {
    server.enqueue(
      answer([{ type: 'text', deltas: ['{"city":"Paris"}'] }]),
      answer([{ type: 'text', deltas: ['{"city":"Paris",', '"days":3}'] }]),
    );
    const agent = defineAgent({
      name: 'planner',
      model: claude(),
      output: Type.Object({ city: Type.String(), days: Type.Integer({ minimum: 1 }) }),
    });
    const run = await agent.ask('Plan a city trip.', { runtime });
    expect(run.outcome).toBe('completed');
    expect(run.output).toEqual({ city: 'Paris', days: 3 });

    const [first, repair] = server.requests.map((request) => request.body);
    expect(first.output_config.format).toEqual({
      type: 'json_schema',
      schema: {
        type: 'object',
        properties: { city: { type: 'string' }, days: { type: 'integer', description: '{minimum: 1}' } },
        required: ['city', 'days'],
        additionalProperties: false,
      },
    });
    expect(repair.output_config).toEqual(first.output_config);
    expect(repair.messages[1]).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: '{"city":"Paris"}' }],
    });
    expect(repair.messages[2].content[0].text).toMatch(/does not match the required JSON schema/);
  });
});

describe('settings and retries through the agent', () => {
  it('sends modelSettings, and shows a retried 529 as a model_retry event', async () => {
    server.enqueue(
      { kind: 'error', status: 529, body: errorBody('overloaded_error', 'Overloaded') },
      answer([{ type: 'text', deltas: ['Here.'] }], {
        id: 'msg_after_retry',
        model: 'claude-sonnet-4-5-20250929',
      }),
    );
    const agent = defineAgent({
      name: 'brief',
      model: claude({ maxRetries: 1 }),
      modelSettings: { maxOutputTokens: 512, stopSequences: ['###'], temperature: 0.3 },
    });
    const stream = agent.streamAsk('Hi', { runtime });
    const events: StreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const run = await stream.run;
    expect(run.outcome).toBe('completed');
    expect(events.find((event) => event.type === 'model_retry')?.data).toMatchObject({
      turn: 1,
      attempt: 2,
      error: { name: 'ModelUnavailableError' },
    });
    expect(events.find((event) => event.type === 'model_stop')?.data).toMatchObject({
      finishReason: 'stop',
      rawFinishReason: 'end_turn',
      responseId: 'msg_after_retry',
      responseModelId: 'claude-sonnet-4-5-20250929',
    });
    const body = server.requests[1]?.body;
    expect(body.max_tokens).toBe(512);
    expect(body.stop_sequences).toEqual(['###']);
    expect(body).not.toHaveProperty('temperature');
  });
});
