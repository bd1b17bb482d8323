import { createAnthropic } from '@ai-sdk/anthropic';
import type { ModelMessage } from '@ghost/core';
import { ModelAuthenticationError, ModelUnavailableError } from '@ghost/core/provider';
import { afterEach, describe, expect, it } from 'vitest';
import { fromAISDK } from './from-ai-sdk.js';
import { AnthropicEvents, anthropicError } from './test-support/anthropic-wire.js';
import { LoopbackServer } from './test-support/loopback-server.js';
import {
  assistantMessageFrom,
  modelRequest,
  streamAll,
  streamUntilError,
  textOf,
} from './test-support/model-run.js';

// @ai-sdk/anthropic 3.x (specification v3) against a loopback server that speaks the Messages
// API's streaming events.

let server: LoopbackServer;
afterEach(async () => {
  await server?.close();
});

function claude({ withKey = true } = {}) {
  const anthropic = createAnthropic({
    baseURL: `${server.origin}/v1`,
    ...(withKey ? { apiKey: 'sk-ant-test' } : {}),
  });
  return fromAISDK(anthropic('claude-sonnet-4-5'));
}

const smallUsage = { input_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
const lookupTool = {
  name: 'lookup',
  description: 'Looks a topic up.',
  inputSchema: { type: 'object', properties: { topic: { type: 'string' } }, required: ['topic'] },
};

describe('thinking', () => {
  it('ends a thinking block with its signature and sends it back unchanged next turn', async () => {
    server = await LoopbackServer.start([
      new AnthropicEvents(smallUsage)
        .thinking(['Let me ', 'check the policy.'], 'EqQBCkYIBxgCKkD-signature')
        .toolUse('toolu_01', 'lookup', ['{"topic":', ' "refunds"}'])
        .stop('tool_use', 60),
      new AnthropicEvents(smallUsage).text(['Five days.']).stop('end_turn', 5),
    ]);
    const model = claude();
    const thinking = { anthropic: { thinking: { type: 'enabled', budgetTokens: 1024 } } };
    const first = await streamAll(model, modelRequest({ tools: [lookupTool], providerOptions: thinking }));
    expect(first).toEqual([
      { type: 'response-metadata', id: 'msg_01Ghost', modelId: 'claude-sonnet-4-5-20250929' },
      { type: 'reasoning-delta', text: 'Let me ' },
      { type: 'reasoning-delta', text: 'check the policy.' },
      {
        type: 'reasoning-end',
        reasoning: {
          text: 'Let me check the policy.',
          provider: 'anthropic.messages',
          providerMetadata: { anthropic: { signature: 'EqQBCkYIBxgCKkD-signature' } },
        },
      },
      { type: 'tool-call-start', index: 0, id: 'toolu_01', name: 'lookup' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"topic":' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: ' "refunds"}' },
      { type: 'tool-call-stop', index: 0 },
      {
        type: 'usage',
        usage: { inputTokens: 20, outputTokens: 60, cacheReadTokens: 0, cacheWriteTokens: 0 },
      },
      { type: 'finish', reason: 'tool-calls', rawReason: 'tool_use' },
    ]);
    expect(server.requests[0]?.body).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 1024 } });

    const messages: ModelMessage[] = [
      { role: 'user', content: 'How long do refunds take?' },
      assistantMessageFrom(first),
      {
        role: 'tool',
        toolCallId: 'toolu_01',
        toolName: 'lookup',
        content: 'The lookup service is down.',
        isError: true,
      },
    ];
    await streamAll(model, modelRequest({ messages, tools: [lookupTool], providerOptions: thinking }));
    expect(server.requests[1]?.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'How long do refunds take?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Let me check the policy.', signature: 'EqQBCkYIBxgCKkD-signature' },
          { type: 'tool_use', id: 'toolu_01', name: 'lookup', input: { topic: 'refunds' } },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_01',
            content: 'The lookup service is down.',
            is_error: true,
          },
        ],
      },
    ]);
  });

  it('round-trips redacted thinking as its opaque data', async () => {
    server = await LoopbackServer.start([
      new AnthropicEvents(smallUsage)
        .redactedThinking('EmwKAhgBEgy3va-redacted')
        .text(['Done.'])
        .stop('end_turn', 9),
      new AnthropicEvents(smallUsage).text(['Again.']).stop('end_turn', 3),
    ]);
    const model = claude();
    const first = await streamAll(model, modelRequest());
    const assistant = assistantMessageFrom(first);
    expect(assistant.reasoning).toEqual([
      {
        text: '',
        provider: 'anthropic.messages',
        providerMetadata: { anthropic: { redactedData: 'EmwKAhgBEgy3va-redacted' } },
      },
    ]);
    await streamAll(
      model,
      modelRequest({
        messages: [{ role: 'user', content: 'Hi' }, assistant, { role: 'user', content: 'Again' }],
      }),
    );
    expect((server.body(1).messages as unknown[])[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va-redacted' },
        { type: 'text', text: 'Done.' },
      ],
    });
  });
});

describe('usage and finish', () => {
  it('counts cache reads and writes inside inputTokens and separately, as Anthropic does not', async () => {
    server = await LoopbackServer.start([
      new AnthropicEvents({
        input_tokens: 20,
        cache_creation_input_tokens: 1000,
        cache_read_input_tokens: 3000,
      })
        .text(['Hi.'])
        .stop('end_turn', 50),
    ]);
    const parts = await streamAll(claude(), modelRequest());
    expect(parts.find((part) => part.type === 'usage')).toEqual({
      type: 'usage',
      usage: { inputTokens: 4020, outputTokens: 50, cacheReadTokens: 3000, cacheWriteTokens: 1000 },
    });
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['tool_use', 'tool-calls'],
    ['refusal', 'content-filter'],
  ])('normalises stop_reason %s to %s and keeps the raw value', async (raw, reason) => {
    server = await LoopbackServer.start([new AnthropicEvents(smallUsage).text(['x']).stop(raw, 2)]);
    const parts = await streamAll(claude(), modelRequest());
    expect(parts.at(-1)).toEqual({ type: 'finish', reason, rawReason: raw });
  });
});

describe('the request', () => {
  it('sends images, documents, tool definitions, tool results with artifacts and settings', async () => {
    server = await LoopbackServer.start([
      new AnthropicEvents(smallUsage).text(['Seen.']).stop('end_turn', 2),
    ]);
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47]);
    await streamAll(
      claude(),
      modelRequest({
        instructions: 'You read receipts.',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Read these.' },
              { type: 'image', data: png, mediaType: 'image/png' },
              { type: 'image', data: new URL('https://example.com/receipt.jpg'), mediaType: 'image/jpeg' },
              { type: 'file', data: new Uint8Array([0x25, 0x50, 0x44, 0x46]), mediaType: 'application/pdf' },
            ],
          },
          { role: 'assistant', content: '', toolCalls: [{ id: 'toolu_9', name: 'chart', arguments: '{}' }] },
          {
            role: 'tool',
            toolCallId: 'toolu_9',
            toolName: 'chart',
            content: 'Here is the chart.',
            artifacts: [{ name: 'chart.png', mediaType: 'image/png', data: png }],
          },
        ],
        settings: { temperature: 0.5, maxOutputTokens: 1000, stopSequences: ['###'] },
      }),
    );
    const body = server.requests[0]?.body;
    expect(server.requests[0]?.headers['x-api-key']).toBe('sk-ant-test');
    expect(body).toMatchObject({
      model: 'claude-sonnet-4-5',
      max_tokens: 1000,
      temperature: 0.5,
      stop_sequences: ['###'],
      system: [{ type: 'text', text: 'You read receipts.' }],
      stream: true,
    });
    expect(body?.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Read these.' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw==' } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/receipt.jpg' } },
          { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERg==' } },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_9', name: 'chart', input: {} }] },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_9',
            content: [
              { type: 'text', text: 'Here is the chart.' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw==' } },
            ],
          },
        ],
      },
    ]);
  });
});

describe('failures', () => {
  it('retries an overloaded answer (529) and then streams', async () => {
    server = await LoopbackServer.start([
      anthropicError(529, 'overloaded_error', 'Overloaded', { 'retry-after': '0' }),
      new AnthropicEvents(smallUsage).text(['Back.']).stop('end_turn', 2),
    ]);
    const parts = await streamAll(claude(), modelRequest());
    expect(parts[0]).toMatchObject({ type: 'retry', attempt: 2, delayMs: 0 });
    expect(ModelUnavailableError.isInstance(parts[0]?.type === 'retry' ? parts[0].error : undefined)).toBe(
      true,
    );
    expect(textOf(parts)).toBe('Back.');
  });

  it('retries an overloaded error that arrives right after message_start, before any content', async () => {
    const overloaded = new AnthropicEvents(smallUsage).events;
    overloaded.push({
      event: 'error',
      data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
    });
    server = await LoopbackServer.start([
      { kind: 'sse', events: overloaded },
      new AnthropicEvents(smallUsage, 'msg_02Ghost').text(['Back.']).stop('end_turn', 2),
    ]);
    const parts = await streamAll(claude(), modelRequest());
    expect(parts.map((part) => part.type)).toEqual([
      'retry',
      'response-metadata',
      'text-delta',
      'usage',
      'finish',
    ]);
    expect(parts[1]).toEqual({
      type: 'response-metadata',
      id: 'msg_02Ghost',
      modelId: 'claude-sonnet-4-5-20250929',
    });
    expect(server.requests).toHaveLength(2);
  });

  it('fails with ModelUnavailableError when an overloaded error arrives mid-answer', async () => {
    const events = new AnthropicEvents(smallUsage).text(['Half']).events;
    events.push({
      event: 'error',
      data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
    });
    server = await LoopbackServer.start([{ kind: 'sse', events }]);
    const { parts, error } = await streamUntilError(claude(), modelRequest());
    expect(textOf(parts)).toBe('Half');
    expect(ModelUnavailableError.isInstance(error)).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  it('fails a 401 with ModelAuthenticationError naming ANTHROPIC_API_KEY', async () => {
    server = await LoopbackServer.start([anthropicError(401, 'authentication_error', 'invalid x-api-key')]);
    const { error } = await streamUntilError(claude(), modelRequest());
    expect(ModelAuthenticationError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(
      /anthropic\.messages answered 401: invalid x-api-key.*ANTHROPIC_API_KEY/,
    );
    expect(error).toMatchObject({ requestId: 'req_401' });
  });

  it('fails before any request when no API key is set, naming ANTHROPIC_API_KEY', async () => {
    server = await LoopbackServer.start([
      new AnthropicEvents(smallUsage).text(['never']).stop('end_turn', 1),
    ]);
    const saved = process.env.ANTHROPIC_API_KEY;
    delete process.env.ANTHROPIC_API_KEY;
    try {
      const { error } = await streamUntilError(claude({ withKey: false }), modelRequest());
      expect(ModelAuthenticationError.isInstance(error)).toBe(true);
      expect((error as Error).message).toMatch(/ANTHROPIC_API_KEY/);
      expect(server.requests).toHaveLength(0);
    } finally {
      if (saved !== undefined) process.env.ANTHROPIC_API_KEY = saved;
    }
  });
});
