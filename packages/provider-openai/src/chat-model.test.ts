import { ConfigurationError } from '@ghost/core';
import {
  ModelAuthenticationError,
  ModelContextOverflowError,
  ModelRateLimitError,
  ModelResponseError,
  ModelUnavailableError,
} from '@ghost/core/provider';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createOpenAI } from './openai-provider.js';
import {
  chatChunk,
  chatCompletionId,
  chatModel,
  chatText,
  chatUsageChunk,
  toolCallFragment,
} from './test-support/chat-chunks.js';
import { collectParts, collectUntilError, requestOf, textOf } from './test-support/collect-parts.js';
import { chatStream, errorReply, LoopbackServer } from './test-support/loopback-server.js';

let server: LoopbackServer;

beforeEach(async () => {
  server = await LoopbackServer.start();
});

afterEach(async () => {
  await server.close();
});

function chat(modelId = 'gpt-4.1', settings: Parameters<typeof createOpenAI>[0] = {}) {
  return createOpenAI({ apiKey: 'sk-test', baseURL: server.baseURL, ...settings }).chat(modelId);
}

describe('streaming an answer from Chat Completions', () => {
  it('streams text, then usage and finish, with the completion id and model first', async () => {
    server.reply(chatStream([...chatText(['Hel', 'lo']), chatUsageChunk({ prompt: 20, completion: 2 })]));
    const model = chat();
    expect(model).toMatchObject({ provider: 'openai-chat', modelId: 'gpt-4.1' });
    const parts = await collectParts(model, requestOf({ instructions: 'Be brief.' }));
    expect(parts).toEqual([
      { type: 'response-metadata', id: chatCompletionId, modelId: chatModel },
      { type: 'text-delta', text: 'Hel' },
      { type: 'text-delta', text: 'lo' },
      { type: 'usage', usage: { inputTokens: 20, outputTokens: 2, totalTokens: 22 } },
      { type: 'finish', reason: 'stop', rawReason: 'stop' },
    ]);
    const [request] = server.requests;
    expect(request?.path).toBe('/v1/chat/completions');
    expect(request?.headers.authorization).toBe('Bearer sk-test');
    expect(request?.body).toEqual({
      model: 'gpt-4.1',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hi' },
      ],
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('streams parallel tool calls by index, with interleaved argument deltas and ids kept', async () => {
    server.reply(
      chatStream([
        chatChunk({ role: 'assistant', content: null }),
        chatChunk({
          tool_calls: [toolCallFragment(0, { id: 'call_weather', name: 'weather', arguments: '' })],
        }),
        chatChunk({
          tool_calls: [toolCallFragment(1, { id: 'call_time', name: 'time', arguments: '{"zone":' })],
        }),
        chatChunk({ tool_calls: [toolCallFragment(0, { arguments: '{"city":' })] }),
        chatChunk({
          tool_calls: [
            toolCallFragment(1, { arguments: '"CET"}' }),
            toolCallFragment(0, { arguments: '"Paris"}' }),
          ],
        }),
        chatChunk({}, 'tool_calls'),
        chatUsageChunk({ prompt: 30, completion: 12 }),
      ]),
    );
    const parts = await collectParts(chat());
    expect(parts.filter((part) => part.type.startsWith('tool-call'))).toEqual([
      { type: 'tool-call-start', index: 0, id: 'call_weather', name: 'weather' },
      { type: 'tool-call-start', index: 1, id: 'call_time', name: 'time' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '{"zone":' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"city":' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '"CET"}' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '"Paris"}' },
      { type: 'tool-call-stop', index: 0 },
      { type: 'tool-call-stop', index: 1 },
    ]);
    expect(parts.at(-1)).toEqual({ type: 'finish', reason: 'tool-calls', rawReason: 'tool_calls' });
  });

  it('reports cached and reasoning tokens, and no usage when the server sends none', async () => {
    server.reply(
      chatStream([
        ...chatText(['x']),
        chatUsageChunk({ prompt: 3000, cached: 2048, completion: 400, reasoning: 320 }),
      ]),
      chatStream(chatText(['y'])),
    );
    const parts = await collectParts(chat('o4-mini'));
    expect(parts.find((part) => part.type === 'usage')).toEqual({
      type: 'usage',
      usage: {
        inputTokens: 3000,
        cacheReadTokens: 2048,
        outputTokens: 400,
        reasoningTokens: 320,
        totalTokens: 3400,
      },
    });
    const withoutUsage = await collectParts(chat());
    expect(withoutUsage.some((part) => part.type === 'usage')).toBe(false);
    expect(withoutUsage.at(-1)).toEqual({ type: 'finish', reason: 'stop', rawReason: 'stop' });
  });

  it.each([
    ['length', 'length'],
    ['content_filter', 'content-filter'],
    ['function_call', 'tool-calls'],
    ['eos_token', 'other'],
  ])('finish_reason %s finishes as %s, keeping the raw value', async (raw, reason) => {
    server.reply(chatStream(chatText(['partial'], raw)));
    const parts = await collectParts(chat());
    expect(parts.at(-1)).toEqual({ type: 'finish', reason, rawReason: raw });
  });
});

describe('Chat Completions failures', () => {
  it('retries a 429 after its retry-after, with a retry part', async () => {
    server.reply(
      errorReply(
        429,
        { message: 'Rate limit reached.', code: 'rate_limit_exceeded' },
        { 'retry-after-ms': '20' },
      ),
      chatStream(chatText(['ok'])),
    );
    const parts = await collectParts(chat());
    expect(parts[0]).toMatchObject({ type: 'retry', attempt: 2, delayMs: 20 });
    expect(parts[0]?.type === 'retry' && ModelRateLimitError.isInstance(parts[0].error)).toBe(true);
    expect(textOf(parts)).toBe('ok');
  });

  it('a 401 names OPENAI_API_KEY', async () => {
    server.reply(errorReply(401, { message: 'Incorrect API key provided.', code: 'invalid_api_key' }));
    const { error } = await collectUntilError(chat());
    expect(ModelAuthenticationError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('OPENAI_API_KEY');
  });

  it('retries a 500 and then answers', async () => {
    server.reply(errorReply(500, { message: 'boom', type: 'server_error' }), chatStream(chatText(['fine'])));
    const parts = await collectParts(chat('gpt-4.1', { maxRetries: 1 }));
    expect(parts.map((part) => part.type)).toContain('retry');
    expect(textOf(parts)).toBe('fine');
  });

  it('a context-length refusal is a ModelContextOverflowError', async () => {
    server.reply(
      errorReply(400, {
        message: "This model's maximum context length is 128000 tokens.",
        code: 'context_length_exceeded',
      }),
    );
    const { error } = await collectUntilError(chat());
    expect(ModelContextOverflowError.isInstance(error)).toBe(true);
  });

  it('an error inside the stream throws the matching error', async () => {
    server.reply(
      chatStream([
        chatChunk({ role: 'assistant', content: 'so far' }),
        { error: { message: 'The server is overloaded.', type: 'server_error', code: null } },
      ]),
    );
    const { parts, error } = await collectUntilError(chat());
    expect(ModelUnavailableError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('The server is overloaded.');
    expect(parts.some((part) => part.type === 'finish')).toBe(false);
  });

  it('a stream without a finish_reason is a ModelResponseError, even with [DONE]', async () => {
    server.reply(chatStream([chatChunk({ role: 'assistant', content: 'all' })]));
    const { parts, error } = await collectUntilError(chat());
    expect(ModelResponseError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('ended without a finish_reason');
    expect(textOf(parts)).toBe('all');
  });

  it.each(['end', 'destroy'] as const)('a stream cut mid-event (%s) is a ModelResponseError', async (cut) => {
    server.reply(chatStream([chatChunk({ role: 'assistant', content: 'half' })], { cut }));
    const { parts, error } = await collectUntilError(chat());
    expect(ModelResponseError.isInstance(error)).toBe(true);
    expect(parts.some((part) => part.type === 'finish')).toBe(false);
  });

  it('abort closes the HTTP stream at once', async () => {
    server.reply(chatStream([chatChunk({ role: 'assistant', content: 'first' })], { hang: true }));
    const controller = new AbortController();
    const consuming = (async () => {
      for await (const part of chat().stream(requestOf(), { signal: controller.signal })) {
        if (part.type === 'text-delta') controller.abort(new Error('cancelled'));
      }
    })();
    await expect(consuming).rejects.toThrow('cancelled');
    await server.requests[0]?.closed;
    expect(server.requests[0]?.isReplyFinished()).toBe(false);
  });
});

describe('what a Chat Completions request carries', () => {
  it('sends history: assistant tool calls with null content, tool results, artifacts after them', async () => {
    server.reply(chatStream(chatText(['ok'])));
    await collectParts(
      chat(),
      requestOf({
        instructions: 'Use tools.',
        tools: [{ name: 'weather', description: 'Weather for a city.', inputSchema: { type: 'object' } }],
        messages: [
          { role: 'user', content: 'Weather in Paris and Rome?' },
          {
            role: 'assistant',
            content: '',
            reasoning: [{ text: 'hidden', provider: 'openai', id: 'rs_1', redactedData: 'x' }],
            toolCalls: [
              { id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' },
              { id: 'call_2', name: 'weather', arguments: '{"city":"Rome"}' },
            ],
          },
          {
            role: 'tool',
            toolCallId: 'call_1',
            toolName: 'weather',
            content: '21',
            artifacts: [{ name: 'paris.png', mediaType: 'image/png', data: new Uint8Array([1, 2]) }],
          },
          {
            role: 'tool',
            toolCallId: 'call_2',
            toolName: 'weather',
            content: 'No such city.',
            isError: true,
          },
          { role: 'assistant', content: 'Paris: 21.' },
          { role: 'user', content: 'Thanks' },
        ],
      }),
    );
    const { body } = server.requests[0] ?? {};
    expect(body.tools).toEqual([
      {
        type: 'function',
        function: { name: 'weather', description: 'Weather for a city.', parameters: { type: 'object' } },
      },
    ]);
    expect(body.messages).toEqual([
      { role: 'system', content: 'Use tools.' },
      { role: 'user', content: 'Weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_2', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '21' },
      { role: 'tool', tool_call_id: 'call_2', content: 'No such city.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Files the tools returned:' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AQI=' } },
        ],
      },
      { role: 'assistant', content: 'Paris: 21.' },
      { role: 'user', content: 'Thanks' },
    ]);
  });

  it('sends user images as image_url and files as file', async () => {
    server.reply(chatStream(chatText(['ok'])));
    await collectParts(
      chat(),
      requestOf({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Look' },
              { type: 'image', data: new URL('https://example.com/a.png') },
              { type: 'image', data: new URL('data:image/png;base64,AAAA') },
              { type: 'file', data: 'JVBERg==', mediaType: 'application/pdf' },
            ],
          },
        ],
      }),
    );
    expect(server.requests[0]?.body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look' },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
          { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERg==', filename: 'file.pdf' } },
        ],
      },
    ]);
  });

  it('refuses a file URL, which Chat Completions cannot fetch', async () => {
    const { error } = await collectUntilError(
      chat(),
      requestOf({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'file', data: new URL('https://example.com/a.pdf'), mediaType: 'application/pdf' },
            ],
          },
        ],
      }),
    );
    expect(ConfigurationError.isInstance(error)).toBe(true);
    expect(server.requests).toHaveLength(0);
  });

  it('maps settings, structured output and providerOptions.openai', async () => {
    server.reply(chatStream(chatText(['{"a":1}'])), chatStream(chatText(['{}'])));
    const schema = {
      type: 'object',
      properties: { a: { type: 'number' } },
      required: ['a'],
      additionalProperties: false,
    };
    await collectParts(
      chat(),
      requestOf({
        settings: { temperature: 0, topP: 1, maxOutputTokens: 100, stopSequences: ['END'], seed: 42 },
        output: { type: 'json', schema, name: 'answer' },
        providerOptions: { openai: { service_tier: 'flex', stream_options: { include_obfuscation: false } } },
      }),
    );
    expect(server.requests[0]?.body).toMatchObject({
      temperature: 0,
      top_p: 1,
      max_completion_tokens: 100,
      stop: ['END'],
      seed: 42,
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } },
      service_tier: 'flex',
      stream: true,
      stream_options: { include_usage: true, include_obfuscation: false },
    });
    const optional = { type: 'object', properties: { a: { type: 'number' } } };
    await collectParts(
      chat('gpt-5'),
      requestOf({ output: { type: 'json', schema: optional }, settings: { temperature: 1 } }),
    );
    expect(server.requests[1]?.body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'output', schema: optional, strict: false },
    });
    expect(server.requests[1]?.body.temperature).toBeUndefined();
  });
});
