import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { defineAgent, defineTool, type StreamEvent } from '@ghost/core';
import Type from 'typebox';
import { afterEach, describe, expect, it } from 'vitest';
import { fromAISDK } from './from-ai-sdk.js';
import { AnthropicEvents } from './test-support/anthropic-wire.js';
import { LoopbackServer } from './test-support/loopback-server.js';
import { chatTextStream, openaiError } from './test-support/openai-wire.js';

// Agents driven through AI SDK models: conversations that carry reasoning across turns and runs,
// structured output, settings, and retries as the run shows them.

let server: LoopbackServer;
afterEach(async () => {
  await server?.close();
});

const lookup = defineTool({
  name: 'lookup',
  description: 'Returns the help-center entry for a topic.',
  input: Type.Object({ topic: Type.String() }),
  execute: ({ topic }) => ({ topic, text: topic === 'refunds' ? '5 business days' : 'No entry.' }),
});
const usage = { input_tokens: 30, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

describe('a conversation with Claude through @ai-sdk/anthropic', () => {
  it('sends signed thinking back within a run and when the conversation continues', async () => {
    server = await LoopbackServer.start([
      new AnthropicEvents(usage)
        .thinking(['Check the policy.'], 'sig-turn-1')
        .toolUse('toolu_1', 'lookup', ['{"topic":"refunds"}'])
        .stop('tool_use', 40),
      new AnthropicEvents(usage).text(['Refunds take 5 business days.']).stop('end_turn', 10),
      new AnthropicEvents(usage).text(['Shipping is not in the help center.']).stop('end_turn', 10),
    ]);
    const anthropic = createAnthropic({ apiKey: 'sk-ant-test', baseURL: `${server.origin}/v1` });
    const agent = defineAgent({
      name: 'support',
      instructions: 'Answer from the help center.',
      model: fromAISDK(anthropic('claude-sonnet-4-5')),
      tools: [lookup],
      providerOptions: { anthropic: { thinking: { type: 'enabled', budgetTokens: 2048 } } },
      modelSettings: { maxOutputTokens: 4096 },
    });

    const first = await agent.ask('How long do refunds take?');
    expect(first.outcome).toBe('completed');
    expect(first.response).toBe('Refunds take 5 business days.');
    const thinking = { type: 'thinking', thinking: 'Check the policy.', signature: 'sig-turn-1' };
    const toolUse = { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { topic: 'refunds' } };
    // The Anthropic model adds the thinking budget to the answer's maxOutputTokens.
    expect(server.body(0)).toMatchObject({
      max_tokens: 4096 + 2048,
      thinking: { type: 'enabled', budget_tokens: 2048 },
    });
    expect(server.body(1).messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'How long do refunds take?' }] },
      { role: 'assistant', content: [thinking, toolUse] },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_1',
            content: '{"topic":"refunds","text":"5 business days"}',
          },
        ],
      },
    ]);

    const second = await agent.ask([...first.messages, { role: 'user', content: 'And shipping?' }]);
    expect(second.response).toBe('Shipping is not in the help center.');
    const messages = server.body(2).messages as { role: string; content: unknown[] }[];
    expect(messages[1]).toEqual({ role: 'assistant', content: [thinking, toolUse] });
    expect(messages.at(-1)).toEqual({ role: 'user', content: [{ type: 'text', text: 'And shipping?' }] });
  });
});

describe('structured output through @ai-sdk/openai', () => {
  it('asks for the schema as JSON and gives the run its parsed output', async () => {
    server = await LoopbackServer.start([chatTextStream(['{"days":', '5}'])]);
    const openai = createOpenAI({ apiKey: 'sk-test', baseURL: `${server.origin}/v1` });
    const agent = defineAgent({
      name: 'support',
      instructions: 'Answer in JSON.',
      model: fromAISDK(openai.chat('gpt-4.1')),
    });
    const run = await agent.ask('How many days do refunds take?', {
      output: Type.Object({ days: Type.Number() }),
      modelSettings: { temperature: 0 },
    });
    expect(run.outcome).toBe('completed');
    expect(run.output).toEqual({ days: 5 });
    expect(server.body(0)).toMatchObject({
      temperature: 0,
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'output',
          schema: { type: 'object', properties: { days: { type: 'number' } }, required: ['days'] },
        },
      },
    });
  });
});

describe('retries as the run shows them', () => {
  it('emits model_retry for a 429 the model retried, then the answer and its metadata', async () => {
    server = await LoopbackServer.start([
      openaiError(
        429,
        { message: 'Rate limit reached.', type: 'requests', code: 'rate_limit_exceeded' },
        { 'retry-after-ms': '25' },
      ),
      chatTextStream(['Hello.']),
    ]);
    const openai = createOpenAI({ apiKey: 'sk-test', baseURL: `${server.origin}/v1` });
    const agent = defineAgent({
      name: 'support',
      instructions: 'Be brief.',
      model: fromAISDK(openai.chat('gpt-4.1')),
    });
    const events: StreamEvent[] = [];
    const stream = agent.streamAsk('Hi');
    for await (const event of stream) events.push(event);
    const run = await stream.run;
    expect(run.outcome).toBe('completed');
    const retry = events.find((event) => event.type === 'model_retry');
    expect(retry?.data).toMatchObject({
      turn: 1,
      attempt: 2,
      delayMs: 25,
      error: { name: 'ModelRateLimitError' },
    });
    expect(events.find((event) => event.type === 'model_stop')?.data).toMatchObject({
      finishReason: 'stop',
      rawFinishReason: 'stop',
      responseId: 'chatcmpl-ghost1',
      responseModelId: 'gpt-4.1-2025-04-14',
      text: 'Hello.',
    });
  });
});
