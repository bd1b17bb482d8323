import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { ModelMessage } from '@ghost/core';
import { afterEach, describe, expect, it } from 'vitest';
import { fromAISDK } from './from-ai-sdk.js';
import { LoopbackServer } from './test-support/loopback-server.js';
import { assistantMessageFrom, modelRequest, streamAll } from './test-support/model-run.js';
import { chatDelta, chatDone, chatTextStream, chatUsage } from './test-support/openai-wire.js';

// @ai-sdk/openai-compatible 2.x (specification v3), the way applications reach Ollama, vLLM, LM
// Studio or Gemini's OpenAI-compatible endpoint, against a loopback Chat Completions server.

let server: LoopbackServer;
afterEach(async () => {
  await server?.close();
});

function compatibleModel(
  name: string,
  settings: { includeUsage?: boolean; supportsStructuredOutputs?: boolean } = {},
) {
  const provider = createOpenAICompatible({ name, baseURL: `${server.origin}/v1`, ...settings });
  return fromAISDK(provider('qwen3:8b'));
}

describe('a local server such as Ollama', () => {
  it('streams reasoning_content as reasoning and sends it back on the next turn', async () => {
    server = await LoopbackServer.start([
      {
        kind: 'sse',
        events: [
          chatDelta({ role: 'assistant', reasoning_content: 'The user ' }),
          chatDelta({ reasoning_content: 'wants a number.' }),
          chatDelta({ content: '42' }),
          chatDelta({}, 'stop'),
          chatUsage({ prompt_tokens: 11, completion_tokens: 9, total_tokens: 20 }),
          chatDone,
        ],
      },
      chatTextStream(['Still 42.']),
    ]);
    const model = compatibleModel('ollama', { includeUsage: true });
    expect(model.provider).toBe('ollama.chat');
    const first = await streamAll(model, modelRequest());
    expect(first).toEqual([
      { type: 'response-metadata', id: 'chatcmpl-ghost1', modelId: 'gpt-4.1-2025-04-14' },
      { type: 'reasoning-delta', text: 'The user ' },
      { type: 'reasoning-delta', text: 'wants a number.' },
      { type: 'reasoning-end', reasoning: { text: 'The user wants a number.', provider: 'ollama.chat' } },
      { type: 'text-delta', text: '42' },
      { type: 'usage', usage: { inputTokens: 11, outputTokens: 9, cacheReadTokens: 0, reasoningTokens: 0 } },
      { type: 'finish', reason: 'stop', rawReason: 'stop' },
    ]);
    expect(server.requests[0]?.body.stream_options).toEqual({ include_usage: true });

    const messages: ModelMessage[] = [
      { role: 'user', content: 'Hello' },
      assistantMessageFrom(first),
      { role: 'user', content: 'Sure?' },
    ];
    await streamAll(model, modelRequest({ messages }));
    expect(server.requests[1]?.body.messages).toEqual([
      { role: 'user', content: 'Hello' },
      { role: 'assistant', content: '42', reasoning_content: 'The user wants a number.' },
      { role: 'user', content: 'Sure?' },
    ]);
  });

  it('reports no usage when the server was not asked for it', async () => {
    server = await LoopbackServer.start([
      {
        kind: 'sse',
        events: [chatDelta({ role: 'assistant', content: 'Hi' }), chatDelta({}, 'stop'), chatDone],
      },
    ]);
    const parts = await streamAll(compatibleModel('ollama'), modelRequest());
    expect(server.requests[0]?.body.stream_options).toBeUndefined();
    expect(parts.some((part) => part.type === 'usage')).toBe(false);
  });

  it('passes the provider’s options through and asks for JSON-schema output', async () => {
    server = await LoopbackServer.start([chatTextStream(['{"n":1}'])]);
    await streamAll(
      compatibleModel('ollama', { supportsStructuredOutputs: true }),
      modelRequest({
        output: { type: 'json', schema: { type: 'object', properties: { n: { type: 'number' } } } },
        settings: { temperature: 0 },
        providerOptions: { ollama: { keep_alive: '5m', options: { num_ctx: 8192 } } },
      }),
    );
    expect(server.requests[0]?.body).toMatchObject({
      model: 'qwen3:8b',
      temperature: 0,
      keep_alive: '5m',
      options: { num_ctx: 8192 },
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'output', schema: { type: 'object', properties: { n: { type: 'number' } } } },
      },
    });
  });

  it('turns a tool call that arrives whole in one chunk into start, delta and stop', async () => {
    server = await LoopbackServer.start([
      {
        kind: 'sse',
        events: [
          chatDelta({
            role: 'assistant',
            tool_calls: [
              {
                index: 0,
                id: 'call_1',
                type: 'function',
                function: { name: 'lookup', arguments: '{"topic":"refunds"}' },
              },
            ],
          }),
          chatDelta({}, 'tool_calls'),
          chatDone,
        ],
      },
    ]);
    const parts = await streamAll(compatibleModel('ollama'), modelRequest());
    expect(parts.filter((part) => part.type.startsWith('tool-call'))).toEqual([
      { type: 'tool-call-start', index: 0, id: 'call_1', name: 'lookup' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"topic":"refunds"}' },
      { type: 'tool-call-stop', index: 0 },
    ]);
  });
});

describe("Gemini's OpenAI-compatible endpoint", () => {
  it('keeps a tool call’s thought signature and sends it back with the call', async () => {
    server = await LoopbackServer.start([
      {
        kind: 'sse',
        events: [
          chatDelta({
            role: 'assistant',
            tool_calls: [
              {
                index: 0,
                id: 'call_g1',
                type: 'function',
                function: { name: 'lookup', arguments: '{"topic":"refunds"}' },
                extra_content: { google: { thought_signature: 'CsMBAb4+9vs-signature' } },
              },
            ],
          }),
          chatDelta({}, 'tool_calls'),
          chatDone,
        ],
      },
      chatTextStream(['Five days.']),
    ]);
    const model = compatibleModel('google');
    const first = await streamAll(model, modelRequest());
    expect(first.find((part) => part.type === 'tool-call-stop')).toEqual({
      type: 'tool-call-stop',
      index: 0,
      providerMetadata: { google: { thoughtSignature: 'CsMBAb4+9vs-signature' } },
    });
    const messages: ModelMessage[] = [
      { role: 'user', content: 'Refunds?' },
      assistantMessageFrom(first),
      { role: 'tool', toolCallId: 'call_g1', toolName: 'lookup', content: '{"text":"5 days"}' },
    ];
    await streamAll(model, modelRequest({ messages }));
    expect((server.body(1).messages as unknown[])[1]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: 'call_g1',
          type: 'function',
          function: { name: 'lookup', arguments: '{"topic":"refunds"}' },
          extra_content: { google: { thought_signature: 'CsMBAb4+9vs-signature' } },
        },
      ],
    });
  });
});
