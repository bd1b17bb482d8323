import { createOpenAI } from '@ai-sdk/openai';
import type { ModelStreamPart } from '@ghost/core/provider';
import {
  defaultModelStreamLimits,
  ModelAuthenticationError,
  ModelContextOverflowError,
  ModelError,
  ModelRateLimitError,
  ModelResponseError,
  ModelUnavailableError,
} from '@ghost/core/provider';
import { afterEach, describe, expect, it } from 'vitest';
import { type FromAISDKOptions, fromAISDK } from './from-ai-sdk.js';
import { LoopbackServer } from './test-support/loopback-server.js';
import { modelRequest, streamAll, streamUntilError, textOf } from './test-support/model-run.js';
import { chatDelta, chatDone, chatTextStream, chatUsage, openaiError } from './test-support/openai-wire.js';

// @ai-sdk/openai 3.x (specification v3) on its Chat Completions model, against a loopback server
// that speaks Chat Completions' streaming format.

let server: LoopbackServer;
afterEach(async () => {
  await server?.close();
});

function chatModel(options: FromAISDKOptions = {}) {
  const openai = createOpenAI({ apiKey: 'sk-test', baseURL: `${server.origin}/v1` });
  return fromAISDK(openai.chat('gpt-4.1'), options);
}

describe('streaming', () => {
  it('streams text, the response id and model, usage with cached and reasoning tokens, and the finish', async () => {
    server = await LoopbackServer.start([
      chatTextStream(['Refunds take ', '5 business days.'], 'stop', {
        prompt_tokens: 1200,
        completion_tokens: 40,
        total_tokens: 1240,
        prompt_tokens_details: { cached_tokens: 1024 },
        completion_tokens_details: { reasoning_tokens: 16 },
      }),
    ]);
    const model = chatModel();
    expect(model).toMatchObject({
      specificationVersion: 'model-v1',
      provider: 'openai.chat',
      modelId: 'gpt-4.1',
    });
    const parts = await streamAll(model, modelRequest());
    expect(parts).toEqual([
      { type: 'response-metadata', id: 'chatcmpl-ghost1', modelId: 'gpt-4.1-2025-04-14' },
      { type: 'text-delta', text: 'Refunds take ' },
      { type: 'text-delta', text: '5 business days.' },
      {
        type: 'usage',
        usage: { inputTokens: 1200, outputTokens: 40, cacheReadTokens: 1024, reasoningTokens: 16 },
      },
      { type: 'finish', reason: 'stop', rawReason: 'stop' },
    ]);
    expect(server.requests[0]?.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('leaves out usage the provider did not report instead of reporting zeros', async () => {
    server = await LoopbackServer.start([
      {
        kind: 'sse',
        events: [chatDelta({ role: 'assistant', content: 'Hi' }), chatDelta({}, 'stop'), chatDone],
      },
      chatTextStream(['Hi'], 'stop', { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 }),
    ]);
    const withoutUsage = await streamAll(chatModel(), modelRequest());
    expect(withoutUsage.map((part) => part.type)).toEqual(['response-metadata', 'text-delta', 'finish']);
    const withUsage = await streamAll(chatModel(), modelRequest());
    const usage = withUsage.find((part) => part.type === 'usage');
    // OpenAI sends no cache-write count: it stays unknown.
    expect(usage).toEqual({
      type: 'usage',
      usage: { inputTokens: 9, outputTokens: 2, cacheReadTokens: 0, reasoningTokens: 0 },
    });
    expect(usage?.type === 'usage' && 'cacheWriteTokens' in usage.usage).toBe(false);
  });

  it.each([
    ['stop', 'stop'],
    ['length', 'length'],
    ['tool_calls', 'tool-calls'],
    ['function_call', 'tool-calls'],
    ['content_filter', 'content-filter'],
    ['something_new', 'other'],
  ])('normalises finish_reason %s to %s and keeps the raw value', async (raw, reason) => {
    server = await LoopbackServer.start([chatTextStream(['x'], raw)]);
    const parts = await streamAll(chatModel(), modelRequest());
    expect(parts.at(-1)).toEqual({ type: 'finish', reason, rawReason: raw });
  });

  it('streams parallel tool calls with interleaved argument deltas, ids and names kept', async () => {
    server = await LoopbackServer.start([
      {
        kind: 'sse',
        events: [
          chatDelta({ role: 'assistant', content: null }),
          chatDelta({
            tool_calls: [
              { index: 0, id: 'call_a', type: 'function', function: { name: 'lookup', arguments: '' } },
            ],
          }),
          chatDelta({
            tool_calls: [
              { index: 1, id: 'call_b', type: 'function', function: { name: 'weather', arguments: '' } },
            ],
          }),
          chatDelta({ tool_calls: [{ index: 0, function: { arguments: '{"topic":' } }] }),
          chatDelta({ tool_calls: [{ index: 1, function: { arguments: '{"city":"Par' } }] }),
          chatDelta({ tool_calls: [{ index: 0, function: { arguments: '"refunds"}' } }] }),
          chatDelta({ tool_calls: [{ index: 1, function: { arguments: 'is"}' } }] }),
          chatDelta({}, 'tool_calls'),
          chatUsage({ prompt_tokens: 30, completion_tokens: 20, total_tokens: 50 }),
          chatDone,
        ],
      },
    ]);
    const parts = await streamAll(chatModel(), modelRequest());
    const calls = parts.filter((part) => part.type.startsWith('tool-call'));
    expect(calls).toEqual([
      { type: 'tool-call-start', index: 0, id: 'call_a', name: 'lookup' },
      { type: 'tool-call-start', index: 1, id: 'call_b', name: 'weather' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"topic":' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '{"city":"Par' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '"refunds"}' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: 'is"}' },
      { type: 'tool-call-stop', index: 0 },
      { type: 'tool-call-stop', index: 1 },
    ]);
    expect(parts.at(-1)).toEqual({ type: 'finish', reason: 'tool-calls', rawReason: 'tool_calls' });
  });
});

describe('the request', () => {
  it('sends instructions, user parts, tool calls and results, tools, structured output, settings and provider options', async () => {
    server = await LoopbackServer.start([chatTextStream(['{"answer":"5 days"}'])]);
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47]);
    const parts = await streamAll(
      chatModel(),
      modelRequest({
        instructions: 'Answer from the help center.',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What does this say?' },
              { type: 'image', data: png, mediaType: 'image/png' },
              { type: 'image', data: new URL('https://example.com/receipt.jpg') },
              { type: 'image', data: new URL('data:image/gif;base64,R0lGOD') },
              { type: 'file', data: 'JVBERi0=', mediaType: 'application/pdf', filename: 'policy.pdf' },
            ],
          },
          {
            role: 'assistant',
            content: 'Let me look.',
            toolCalls: [
              { id: 'call_1', name: 'lookup', arguments: '{"topic":"refunds"}' },
              { id: 'call_2', name: 'lookup', arguments: '{"topic":"shipping"}' },
              { id: 'call_3', name: 'lookup', arguments: '{"topic":' },
            ],
          },
          { role: 'tool', toolCallId: 'call_1', toolName: 'lookup', content: '{"text":"5 days"}' },
          { role: 'tool', toolCallId: 'call_2', toolName: 'lookup', content: 'No entry for shipping.' },
          {
            role: 'tool',
            toolCallId: 'call_3',
            toolName: 'lookup',
            content: 'The arguments are not valid JSON.',
            isError: true,
          },
        ],
        tools: [
          {
            name: 'lookup',
            description: 'Returns the help-center entry for a topic.',
            inputSchema: { type: 'object', properties: { topic: { type: 'string' } }, required: ['topic'] },
          },
        ],
        output: {
          type: 'json',
          name: 'answer',
          description: 'The answer.',
          schema: {
            type: 'object',
            properties: { answer: { type: 'string' } },
            required: ['answer'],
            additionalProperties: false,
          },
        },
        settings: { temperature: 0.2, topP: 0.9, maxOutputTokens: 300, stopSequences: ['END'], seed: 7 },
        providerOptions: { openai: { user: 'ghost-user-1', parallelToolCalls: false } },
      }),
    );
    expect(parts.at(-1)?.type).toBe('finish');
    const [request] = server.requests;
    expect(request?.path).toBe('/v1/chat/completions');
    expect(request?.headers.authorization).toBe('Bearer sk-test');
    expect(request?.body).toEqual({
      model: 'gpt-4.1',
      stream: true,
      stream_options: { include_usage: true },
      user: 'ghost-user-1',
      parallel_tool_calls: false,
      temperature: 0.2,
      top_p: 0.9,
      max_tokens: 300,
      stop: ['END'],
      seed: 7,
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'answer',
          description: 'The answer.',
          strict: true,
          schema: {
            type: 'object',
            properties: { answer: { type: 'string' } },
            required: ['answer'],
            additionalProperties: false,
          },
        },
      },
      tools: [
        {
          type: 'function',
          function: {
            name: 'lookup',
            description: 'Returns the help-center entry for a topic.',
            parameters: { type: 'object', properties: { topic: { type: 'string' } }, required: ['topic'] },
          },
        },
      ],
      messages: [
        { role: 'system', content: 'Answer from the help center.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What does this say?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw==' } },
            { type: 'image_url', image_url: { url: 'https://example.com/receipt.jpg' } },
            { type: 'image_url', image_url: { url: 'data:image/gif;base64,R0lGOD' } },
            {
              type: 'file',
              file: { filename: 'policy.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' },
            },
          ],
        },
        {
          role: 'assistant',
          content: 'Let me look.',
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'lookup', arguments: '{"topic":"refunds"}' },
            },
            {
              id: 'call_2',
              type: 'function',
              function: { name: 'lookup', arguments: '{"topic":"shipping"}' },
            },
            // Arguments that were never JSON go back as the text they were; OpenAI's AI SDK model
            // sends such a call as an empty object.
            { id: 'call_3', type: 'function', function: { name: 'lookup', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '{"text":"5 days"}' },
        { role: 'tool', tool_call_id: 'call_2', content: 'No entry for shipping.' },
        { role: 'tool', tool_call_id: 'call_3', content: 'The arguments are not valid JSON.' },
      ],
    });
  });
});

describe('failures', () => {
  it('retries a 429 after the retry-after the provider asked, announcing it with a retry part', async () => {
    server = await LoopbackServer.start([
      openaiError(
        429,
        { message: 'Rate limit reached for gpt-4.1.', type: 'requests', code: 'rate_limit_exceeded' },
        { 'retry-after-ms': '40' },
      ),
      chatTextStream(['Hello']),
    ]);
    const parts = await streamAll(chatModel(), modelRequest());
    const [retry, ...rest] = parts;
    expect(retry).toMatchObject({ type: 'retry', attempt: 2, delayMs: 40 });
    const error = (retry as Extract<ModelStreamPart, { type: 'retry' }>).error;
    expect(ModelRateLimitError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ statusCode: 429, retryAfterMs: 40 });
    expect(textOf(rest)).toBe('Hello');
    expect(server.requests).toHaveLength(2);
  });

  it('fails a 401 at once with ModelAuthenticationError naming OPENAI_API_KEY', async () => {
    server = await LoopbackServer.start([
      openaiError(401, {
        message: 'Incorrect API key provided: sk-test.',
        type: 'invalid_request_error',
        code: 'invalid_api_key',
      }),
    ]);
    const { parts, error } = await streamUntilError(chatModel(), modelRequest());
    expect(parts).toEqual([]);
    expect(ModelAuthenticationError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ statusCode: 401, code: 'MODEL_AUTHENTICATION_FAILED' });
    expect((error as Error).message).toMatch(
      /openai\.chat answered 401: Incorrect API key provided.*OPENAI_API_KEY/,
    );
    expect(server.requests).toHaveLength(1);
  });

  it('retries a 500 and gives up after maxRetries with ModelUnavailableError', async () => {
    const serverError = openaiError(500, {
      message: 'The server had an error processing your request.',
      type: 'server_error',
    });
    server = await LoopbackServer.start([serverError, serverError]);
    const { parts, error } = await streamUntilError(chatModel({ maxRetries: 1 }), modelRequest());
    expect(parts.map((part) => part.type)).toEqual(['retry']);
    expect(ModelUnavailableError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ statusCode: 500 });
    expect(server.requests).toHaveLength(2);
  });

  it('does not retry when maxRetries is 0', async () => {
    server = await LoopbackServer.start([
      openaiError(503, { message: 'The engine is currently overloaded.', type: 'server_error' }),
      chatTextStream(['never asked']),
    ]);
    const { parts, error } = await streamUntilError(chatModel({ maxRetries: 0 }), modelRequest());
    expect(parts).toEqual([]);
    expect(ModelUnavailableError.isInstance(error)).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  it('reports a context-length refusal as ModelContextOverflowError, not retried', async () => {
    server = await LoopbackServer.start([
      openaiError(400, {
        message:
          "This model's maximum context length is 128000 tokens. However, your messages resulted in 130001 tokens.",
        type: 'invalid_request_error',
        code: 'context_length_exceeded',
        param: 'messages',
      }),
    ]);
    const { error } = await streamUntilError(chatModel(), modelRequest());
    expect(ModelContextOverflowError.isInstance(error)).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  it("honours the SDK's isRetryable: an exhausted quota in the stream is not retried", async () => {
    server = await LoopbackServer.start([
      {
        kind: 'sse',
        events: [
          chatDelta({ role: 'assistant', content: '' }),
          {
            data: {
              error: {
                message: 'You exceeded your current quota.',
                type: 'insufficient_quota',
                code: 'insufficient_quota',
              },
            },
          },
        ],
      },
      chatTextStream(['never asked']),
    ]);
    const { error } = await streamUntilError(chatModel(), modelRequest());
    expect(ModelRateLimitError.isInstance(error)).toBe(true);
    expect((error as ModelRateLimitError).isRetryable).toBe(false);
    expect(server.requests).toHaveLength(1);
  });

  it('retries a server error the stream reports before any output', async () => {
    server = await LoopbackServer.start([
      {
        kind: 'sse',
        events: [
          chatDelta({ role: 'assistant', content: '' }),
          {
            data: {
              error: {
                message: 'The server had an error while processing your request.',
                type: 'server_error',
              },
            },
          },
        ],
      },
      chatTextStream(['Recovered']),
    ]);
    const parts = await streamAll(chatModel(), modelRequest());
    expect(parts[0]).toMatchObject({ type: 'retry', attempt: 2 });
    expect(textOf(parts)).toBe('Recovered');
  });

  it('fails with the mapped error when the stream reports one after output began, without retrying', async () => {
    server = await LoopbackServer.start([
      {
        kind: 'sse',
        events: [
          chatDelta({ role: 'assistant', content: 'Hal' }),
          {
            data: {
              error: {
                message: 'The server had an error while processing your request.',
                type: 'server_error',
              },
            },
          },
          chatDelta({}, 'stop'),
          chatDone,
        ],
      },
    ]);
    const { parts, error } = await streamUntilError(chatModel(), modelRequest());
    expect(textOf(parts)).toBe('Hal');
    expect(parts.some((part) => part.type === 'finish')).toBe(false);
    expect(ModelUnavailableError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(
      /openai\.chat reported an error in its stream: The server had an error/,
    );
    expect(server.requests).toHaveLength(1);
  });

  it('reports a request the provider cannot take as MODEL_REQUEST_REJECTED, before sending it', async () => {
    server = await LoopbackServer.start([chatTextStream(['never asked'])]);
    const zip = { type: 'file' as const, data: 'UEsDBA==', mediaType: 'application/zip' };
    const { error } = await streamUntilError(
      chatModel(),
      modelRequest({ messages: [{ role: 'user', content: [zip] }] }),
    );
    expect(ModelError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'MODEL_REQUEST_REJECTED', isRetryable: false });
    expect((error as Error).message).toMatch(/openai\.chat cannot take this request: .*application\/zip/);
    expect(server.requests).toHaveLength(0);
  });

  it('reports a refused connection as ModelUnavailableError, retried', async () => {
    server = await LoopbackServer.start();
    const origin = server.origin;
    await server.close();
    const openai = createOpenAI({ apiKey: 'sk-test', baseURL: `${origin}/v1` });
    const { parts, error } = await streamUntilError(
      fromAISDK(openai.chat('gpt-4.1'), { maxRetries: 1 }),
      modelRequest(),
    );
    expect(parts.map((part) => part.type)).toEqual(['retry']);
    expect(ModelUnavailableError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/^Could not reach openai\.chat: Cannot connect to API/);
  });

  it('fails a stream cut mid-event with ModelResponseError, never a finish', async () => {
    server = await LoopbackServer.start([
      {
        kind: 'sse',
        events: [chatDelta({ role: 'assistant', content: '' }), chatDelta({ content: 'Refunds take' })],
        ending: 'cut',
      },
    ]);
    const { parts, error } = await streamUntilError(chatModel(), modelRequest());
    expect(textOf(parts)).toBe('Refunds take');
    expect(parts.some((part) => part.type === 'finish')).toBe(false);
    expect(ModelResponseError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/openai\.chat's stream broke off/);
  });

  it('closes the HTTP stream at once when the signal aborts mid-answer', async () => {
    server = await LoopbackServer.start([
      {
        kind: 'sse',
        events: [chatDelta({ role: 'assistant', content: '' }), chatDelta({ content: 'Refunds' })],
        ending: 'hold',
      },
    ]);
    const controller = new AbortController();
    const reason = new Error('the run was cancelled');
    const seen: ModelStreamPart[] = [];
    const streamed = (async () => {
      for await (const part of chatModel().stream(modelRequest(), { signal: controller.signal })) {
        seen.push(part);
        if (part.type === 'text-delta') controller.abort(reason);
      }
    })();
    await expect(streamed).rejects.toBe(reason);
    expect(textOf(seen)).toBe('Refunds');
    // The server's response never finished: the client closed the connection.
    await expect(server.requests[0]?.closed).resolves.toBe(true);
  });

  it('closes the HTTP stream when the consumer stops reading early', async () => {
    server = await LoopbackServer.start([
      {
        kind: 'sse',
        events: [chatDelta({ role: 'assistant', content: '' }), chatDelta({ content: 'Refunds' })],
        ending: 'hold',
      },
    ]);
    for await (const part of chatModel().stream(modelRequest(), { signal: new AbortController().signal })) {
      if (part.type === 'text-delta') break;
    }
    await expect(server.requests[0]?.closed).resolves.toBe(true);
  });

  it('gives up an attempt that sends nothing for streamIdleTimeoutMs before its first part, and retries it', async () => {
    server = await LoopbackServer.start([
      { kind: 'sse', events: [], ending: 'hold' },
      chatTextStream(['Refunds take 5 days.']),
    ]);
    const limits = { ...defaultModelStreamLimits, streamIdleTimeoutMs: 1_000 };
    const parts: ModelStreamPart[] = [];
    for await (const part of chatModel().stream(modelRequest(), {
      signal: new AbortController().signal,
      limits,
    })) {
      parts.push(part);
    }
    const [retry] = parts;
    expect(retry).toMatchObject({ type: 'retry', attempt: 2 });
    const idle = retry?.type === 'retry' ? retry.error : undefined;
    expect(ModelUnavailableError.isInstance(idle)).toBe(true);
    expect(idle).toMatchObject({ code: 'MODEL_STREAM_IDLE', provider: 'openai.chat' });
    expect(textOf(parts)).toBe('Refunds take 5 days.');
    // The stalled response was closed by the client.
    await expect(server.requests[0]?.closed).resolves.toBe(true);
  });

  it('ends a stream that stalls after its first part with MODEL_STREAM_IDLE, and closes it', async () => {
    server = await LoopbackServer.start([
      {
        kind: 'sse',
        events: [chatDelta({ role: 'assistant', content: '' }), chatDelta({ content: 'Refunds' })],
        ending: 'hold',
      },
    ]);
    const limits = { ...defaultModelStreamLimits, streamIdleTimeoutMs: 1_000 };
    const seen: ModelStreamPart[] = [];
    const streamed = (async () => {
      for await (const part of chatModel().stream(modelRequest(), {
        signal: new AbortController().signal,
        limits,
      })) {
        seen.push(part);
      }
    })();
    await expect(streamed).rejects.toMatchObject({ code: 'MODEL_STREAM_IDLE', limit: 'streamIdleTimeoutMs' });
    expect(textOf(seen)).toBe('Refunds');
    await expect(server.requests[0]?.closed).resolves.toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  it('fails before any request when the signal has already aborted', async () => {
    server = await LoopbackServer.start([chatTextStream(['never asked'])]);
    const controller = new AbortController();
    controller.abort(new Error('cancelled before the turn'));
    await expect(streamAll(chatModel(), modelRequest(), controller.signal)).rejects.toThrow(
      'cancelled before the turn',
    );
    expect(server.requests).toHaveLength(0);
  });
});
