import { getEventListeners } from 'node:events';
import { ConfigurationError, ModelError } from '@ghost/core';
import {
  ModelAuthenticationError,
  ModelContentFilterError,
  ModelContextOverflowError,
  ModelRateLimitError,
  ModelResponseError,
  ModelUnavailableError,
} from '@ghost/core/provider';
import OpenAI from 'openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createOpenAI } from './openai-provider.js';
import { collectParts, collectUntilError, requestOf, textOf } from './test-support/collect-parts.js';
import { errorReply, LoopbackServer, responsesStream } from './test-support/loopback-server.js';
import {
  answeringModel,
  argumentsDelta,
  argumentsDone,
  errorEvent,
  functionCallAdded,
  functionCallDone,
  messageEvents,
  reasoningSummaryEvents,
  reasoningTextEvents,
  responseCompleted,
  responseCreated,
  responseFailed,
  responseId,
  responseIncomplete,
  textAnswer,
  usage,
} from './test-support/responses-events.js';

let server: LoopbackServer;

beforeEach(async () => {
  server = await LoopbackServer.start();
});

afterEach(async () => {
  await server.close();
});

function provider(settings: Parameters<typeof createOpenAI>[0] = {}) {
  return createOpenAI({ apiKey: 'sk-test', baseURL: server.baseURL, ...settings });
}

describe('streaming an answer from the Responses API', () => {
  it('streams text, then usage and finish, with the response id and model first', async () => {
    server.reply(responsesStream(textAnswer(['Hel', 'lo', '!'], usage({ input: 12, output: 3 }))));
    const parts = await collectParts(provider()('gpt-4.1'));
    expect(parts).toEqual([
      { type: 'response-metadata', id: responseId, modelId: answeringModel },
      { type: 'text-delta', text: 'Hel' },
      { type: 'text-delta', text: 'lo' },
      { type: 'text-delta', text: '!' },
      { type: 'usage', usage: { inputTokens: 12, outputTokens: 3, totalTokens: 15 } },
      { type: 'finish', reason: 'stop', rawReason: 'completed' },
    ]);
    const [request] = server.requests;
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe('/v1/responses');
    expect(request?.headers.authorization).toBe('Bearer sk-test');
    expect(request?.body).toEqual({
      model: 'gpt-4.1',
      input: [{ role: 'user', content: 'hi' }],
      store: false,
      stream: true,
    });
  });

  it('sends the instructions as `instructions`, and the tools as functions that are not strict', async () => {
    server.reply(responsesStream(textAnswer(['ok'])));
    const inputSchema = { type: 'object', properties: { query: { type: 'string' } } };
    await collectParts(
      provider()('gpt-4.1'),
      requestOf({
        instructions: 'Be brief.',
        tools: [{ name: 'lookup', description: 'Finds a page.', inputSchema }],
      }),
    );
    expect(server.requests[0]?.body).toMatchObject({
      instructions: 'Be brief.',
      tools: [
        {
          type: 'function',
          name: 'lookup',
          description: 'Finds a page.',
          parameters: inputSchema,
          strict: false,
        },
      ],
    });
  });

  it('streams reasoning summaries, and ends the block with its id and encrypted content for the next turn', async () => {
    server.reply(
      responsesStream([
        responseCreated(),
        ...reasoningSummaryEvents(0, 'rs_1', [['Think', 'ing'], ['More']], 'gAAAA-encrypted'),
        ...messageEvents(1, 'msg_1', ['Answer']),
        responseCompleted(usage({ input: 10, output: 50, reasoning: 40 })),
      ]),
    );
    const parts = await collectParts(provider()('gpt-5'));
    expect(parts.filter((part) => part.type.startsWith('reasoning'))).toEqual([
      { type: 'reasoning-delta', text: 'Think' },
      { type: 'reasoning-delta', text: 'ing' },
      { type: 'reasoning-delta', text: '\n\nMore' },
      {
        type: 'reasoning-end',
        reasoning: {
          text: 'Thinking\n\nMore',
          provider: 'openai',
          id: 'rs_1',
          redactedData: 'gAAAA-encrypted',
        },
      },
    ]);
    expect(textOf(parts)).toBe('Answer');
    // Reasoning ends before the answer's text begins.
    const order = parts.map((part) => part.type);
    expect(order.indexOf('reasoning-end')).toBeLessThan(order.indexOf('text-delta'));
    expect(parts.find((part) => part.type === 'usage')).toEqual({
      type: 'usage',
      usage: { inputTokens: 10, outputTokens: 50, reasoningTokens: 40, totalTokens: 60 },
    });
    // A reasoning model is asked for its encrypted reasoning, since nothing is stored.
    expect(server.requests[0]?.body).toMatchObject({
      store: false,
      include: ['reasoning.encrypted_content'],
    });
  });

  it('streams raw reasoning text (`response.reasoning_text.delta`)', async () => {
    server.reply(
      responsesStream([
        responseCreated(),
        ...reasoningTextEvents(0, 'rs_2', ['step one, ', 'step two']),
        ...messageEvents(1, 'msg_1', ['Done']),
        responseCompleted(),
      ]),
    );
    const parts = await collectParts(provider()('gpt-5'));
    expect(parts.filter((part) => part.type.startsWith('reasoning'))).toEqual([
      { type: 'reasoning-delta', text: 'step one, ' },
      { type: 'reasoning-delta', text: 'step two' },
      { type: 'reasoning-end', reasoning: { text: 'step one, step two', provider: 'openai', id: 'rs_2' } },
    ]);
  });

  it('streams parallel function calls whose argument deltas interleave, keeping their call ids', async () => {
    server.reply(
      responsesStream([
        responseCreated(),
        functionCallAdded(0, 'fc_a', 'call_weather', 'weather'),
        functionCallAdded(1, 'fc_b', 'call_time', 'time'),
        argumentsDelta(0, 'fc_a', '{"city":'),
        argumentsDelta(1, 'fc_b', '{"zone":'),
        argumentsDelta(0, 'fc_a', '"Paris"}'),
        argumentsDelta(1, 'fc_b', '"CET"}'),
        argumentsDone(1, 'fc_b', 'time', '{"zone":"CET"}'),
        functionCallDone(1, 'fc_b', 'call_time', 'time', '{"zone":"CET"}'),
        argumentsDone(0, 'fc_a', 'weather', '{"city":"Paris"}'),
        functionCallDone(0, 'fc_a', 'call_weather', 'weather', '{"city":"Paris"}'),
        responseCompleted(usage({ input: 5, output: 20 })),
      ]),
    );
    const parts = await collectParts(provider()('gpt-4.1'));
    expect(parts.filter((part) => part.type.startsWith('tool-call'))).toEqual([
      { type: 'tool-call-start', index: 0, id: 'call_weather', name: 'weather' },
      { type: 'tool-call-start', index: 1, id: 'call_time', name: 'time' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"city":' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '{"zone":' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '"Paris"}' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '"CET"}' },
      { type: 'tool-call-stop', index: 1 },
      { type: 'tool-call-stop', index: 0 },
    ]);
    expect(parts.at(-1)).toEqual({ type: 'finish', reason: 'tool-calls', rawReason: 'completed' });
  });

  it('takes arguments that arrive only with the finished item', async () => {
    server.reply(
      responsesStream([
        responseCreated(),
        functionCallAdded(0, 'fc_a', 'call_1', 'lookup'),
        functionCallDone(0, 'fc_a', 'call_1', 'lookup', '{"q":"x"}'),
        responseCompleted(),
      ]),
    );
    const parts = await collectParts(provider()('gpt-4.1'));
    expect(parts.filter((part) => part.type.startsWith('tool-call'))).toEqual([
      { type: 'tool-call-start', index: 0, id: 'call_1', name: 'lookup' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"q":"x"}' },
      { type: 'tool-call-stop', index: 0 },
    ]);
  });
});

describe('usage from the Responses API', () => {
  it('reports input (cached included), cache reads, output and reasoning tokens', async () => {
    server.reply(
      responsesStream(textAnswer(['x'], usage({ input: 2000, cached: 1536, output: 300, reasoning: 256 }))),
    );
    const parts = await collectParts(provider()('gpt-5'));
    expect(parts.find((part) => part.type === 'usage')).toEqual({
      type: 'usage',
      usage: {
        inputTokens: 2000,
        cacheReadTokens: 1536,
        outputTokens: 300,
        reasoningTokens: 256,
        totalTokens: 2300,
      },
    });
  });

  it('reports a count of 0 as 0, and leaves a count that is not reported unknown', async () => {
    server.reply(responsesStream(textAnswer(['x'], usage({ input: 9, cached: 0, output: 1 }))));
    const parts = await collectParts(provider()('gpt-4.1'));
    const reported = parts.find((part) => part.type === 'usage');
    expect(reported).toEqual({
      type: 'usage',
      usage: { inputTokens: 9, cacheReadTokens: 0, outputTokens: 1, totalTokens: 10 },
    });
    expect(reported?.type === 'usage' && reported.usage.reasoningTokens).toBeUndefined();
  });

  it('sends no usage part when the response has no usage', async () => {
    server.reply(responsesStream(textAnswer(['x'])));
    const parts = await collectParts(provider()('gpt-4.1'));
    expect(parts.some((part) => part.type === 'usage')).toBe(false);
  });
});

describe('how a Responses answer finishes', () => {
  it.each([
    ['max_output_tokens', 'length'],
    ['content_filter', 'content-filter'],
    ['something_new', 'other'],
  ])('response.incomplete with reason %s finishes as %s, keeping the raw reason', async (raw, reason) => {
    server.reply(
      responsesStream([
        responseCreated(),
        ...messageEvents(0, 'msg_1', ['partial']),
        responseIncomplete(raw, usage({ input: 1, output: 2 })),
      ]),
    );
    const parts = await collectParts(provider()('gpt-4.1'));
    expect(textOf(parts)).toBe('partial');
    expect(parts.at(-1)).toEqual({ type: 'finish', reason, rawReason: raw });
    expect(parts.at(-2)).toMatchObject({ type: 'usage', usage: { inputTokens: 1, outputTokens: 2 } });
  });

  it.each([
    ['server_error', 'The server had an error.', ModelUnavailableError],
    ['rate_limit_exceeded', 'Slow down.', ModelRateLimitError],
    ['invalid_prompt', 'Invalid prompt.', ModelResponseError],
  ])(
    'response.failed with %s throws the matching error, never a finish',
    async (code, message, errorClass) => {
      server.reply(
        responsesStream([
          responseCreated(),
          ...messageEvents(0, 'msg_1', ['so far']),
          responseFailed(code, message),
        ]),
      );
      const { parts, error } = await collectUntilError(provider({ maxRetries: 0 })('gpt-4.1'));
      expect(errorClass.isInstance(error)).toBe(true);
      expect((error as Error).message).toContain(message);
      expect((error as Error).message).toContain(code);
      expect(parts.some((part) => part.type === 'finish')).toBe(false);
    },
  );

  it('an `error` event throws the matching error', async () => {
    server.reply(
      responsesStream([
        responseCreated(),
        ...messageEvents(0, 'msg_1', ['so far']),
        errorEvent('context_length_exceeded', 'Your input exceeds the context window of this model.'),
      ]),
    );
    const { error } = await collectUntilError(provider()('gpt-4.1'));
    expect(ModelContextOverflowError.isInstance(error)).toBe(true);
  });

  it('a failure reported before any output is retried, as a failed request would be', async () => {
    server.reply(
      responsesStream([responseCreated(), responseFailed('server_error', 'Try again.')]),
      responsesStream(textAnswer(['second time'])),
    );
    const parts = await collectParts(provider({ maxRetries: 1 })('gpt-4.1'));
    expect(parts[0]).toMatchObject({ type: 'retry', attempt: 2 });
    expect(textOf(parts)).toBe('second time');
    expect(server.requests).toHaveLength(2);
  });
});

describe('failed requests', () => {
  it('retries a 429 after the delay its retry-after asked for, announcing it with a retry part', async () => {
    server.reply(
      errorReply(
        429,
        { message: 'Rate limit reached.', type: 'requests', code: 'rate_limit_exceeded' },
        { 'retry-after': '1' },
      ),
      responsesStream(textAnswer(['ok'])),
    );
    const parts = await collectParts(provider()('gpt-4.1'));
    const retry = parts[0];
    expect(retry).toMatchObject({ type: 'retry', attempt: 2, delayMs: 1000 });
    expect(retry?.type === 'retry' && ModelRateLimitError.isInstance(retry.error)).toBe(true);
    expect(retry?.type === 'retry' && (retry.error as ModelRateLimitError).retryAfterMs).toBe(1000);
    expect(textOf(parts)).toBe('ok');
    expect(server.requests).toHaveLength(2);
  });

  it('retries a 500, and gives up with ModelUnavailableError after maxRetries', async () => {
    server.reply(
      errorReply(500, { message: 'The server had an error.', type: 'server_error' }),
      responsesStream(textAnswer(['ok'])),
    );
    const parts = await collectParts(provider({ maxRetries: 1 })('gpt-4.1'));
    expect(parts.filter((part) => part.type === 'retry')).toHaveLength(1);
    expect(textOf(parts)).toBe('ok');

    server.reply(
      errorReply(503, { message: 'Overloaded.', type: 'server_error' }),
      errorReply(503, { message: 'Overloaded.', type: 'server_error' }),
    );
    const { parts: failedParts, error } = await collectUntilError(provider({ maxRetries: 1 })('gpt-4.1'));
    expect(ModelUnavailableError.isInstance(error)).toBe(true);
    expect((error as ModelUnavailableError).statusCode).toBe(503);
    expect(failedParts.map((part) => part.type)).toEqual(['retry']);
    expect(server.requests).toHaveLength(4);
  });

  it('a 401 is a ModelAuthenticationError naming OPENAI_API_KEY, not retried', async () => {
    server.reply(
      errorReply(401, {
        message: 'Incorrect API key provided.',
        type: 'invalid_request_error',
        code: 'invalid_api_key',
      }),
    );
    const { error } = await collectUntilError(provider()('gpt-4.1'));
    expect(ModelAuthenticationError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('Incorrect API key provided.');
    expect((error as Error).message).toContain('OPENAI_API_KEY');
    expect(error as ModelAuthenticationError).toMatchObject({
      requestId: 'req_failed',
      statusCode: 401,
    });
    expect(server.requests).toHaveLength(1);
  });

  it('a context-length refusal is a ModelContextOverflowError', async () => {
    server.reply(
      errorReply(400, {
        message:
          'Your input exceeds the context window of this model. Please adjust your input and try again.',
        code: 'context_length_exceeded',
      }),
    );
    const { error } = await collectUntilError(provider()('gpt-4.1'));
    expect(ModelContextOverflowError.isInstance(error)).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  it('a content-policy refusal is a ModelContentFilterError', async () => {
    server.reply(
      errorReply(400, {
        message: 'Your request was rejected by our content policy.',
        code: 'content_policy_violation',
      }),
    );
    const { error } = await collectUntilError(provider()('gpt-4.1'));
    expect(ModelContentFilterError.isInstance(error)).toBe(true);
  });

  it('any other 4xx is a ModelError that is not retried', async () => {
    server.reply(errorReply(404, { message: 'The model `gpt-9` does not exist.', code: 'model_not_found' }));
    const { error } = await collectUntilError(provider()('gpt-9'));
    expect(ModelError.isInstance(error)).toBe(true);
    expect((error as ModelError).code).toBe('MODEL_REQUEST_REJECTED');
    expect((error as ModelError).isRetryable).toBe(false);
    expect(server.requests).toHaveLength(1);
  });

  it('a server that cannot be reached is a ModelUnavailableError', async () => {
    const closed = await LoopbackServer.start();
    const baseURL = closed.baseURL;
    await closed.close();
    const { error } = await collectUntilError(
      createOpenAI({ apiKey: 'sk-test', baseURL, maxRetries: 0 })('gpt-4.1'),
    );
    expect(ModelUnavailableError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/^Could not reach openai/);
  });

  it('a server that does not start answering within timeoutMs is a ModelUnavailableError', async () => {
    server.reply(() => {
      // Never answers: no status line, no headers.
    });
    const { error } = await collectUntilError(provider({ timeoutMs: 100, maxRetries: 0 })('gpt-4.1'));
    expect(ModelUnavailableError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/^Could not reach openai: .*timed out/i);
  });

  it.each([
    ['end', 'ended before the response completed'],
    ['destroy', 'broke off mid-answer'],
  ] as const)(
    'a stream cut mid-event (connection %s) is a ModelResponseError, never a finish',
    async (cut, problem) => {
      server.reply(responsesStream([responseCreated(), ...messageEvents(0, 'msg_1', ['half'])], { cut }));
      const { parts, error } = await collectUntilError(provider()('gpt-4.1'));
      expect(ModelResponseError.isInstance(error)).toBe(true);
      expect((error as Error).message).toContain(problem);
      expect(parts.some((part) => part.type === 'finish')).toBe(false);
      expect(textOf(parts)).toBe('half');
    },
  );

  it('a stream that ends without a terminal event is a ModelResponseError', async () => {
    server.reply(responsesStream([responseCreated(), ...messageEvents(0, 'msg_1', ['all of it'])]));
    const { error } = await collectUntilError(provider()('gpt-4.1'));
    expect(ModelResponseError.isInstance(error)).toBe(true);
    expect((error as Error).message).toBe(
      "openai's stream ended before the response completed; the answer is incomplete.",
    );
  });

  it('an event that is not JSON is a ModelResponseError', async () => {
    server.reply((response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end('event: response.created\ndata: {not json}\n\n');
    });
    const { error } = await collectUntilError(provider()('gpt-4.1'));
    expect(ModelResponseError.isInstance(error)).toBe(true);
  });

  it('arguments for a call that never started are a ModelResponseError', async () => {
    server.reply(responsesStream([responseCreated(), argumentsDelta(3, 'fc_x', '{}'), responseCompleted()]));
    const { error } = await collectUntilError(provider()('gpt-4.1'));
    expect(ModelResponseError.isInstance(error)).toBe(true);
  });
});

describe('aborting', () => {
  it('closes the HTTP stream at once, and the stream rejects with the abort reason', async () => {
    server.reply(
      responsesStream([responseCreated(), ...messageEvents(0, 'msg_1', ['first'])], { hang: true }),
    );
    const controller = new AbortController();
    const parts: string[] = [];
    const reason = new Error('user cancelled');
    const consuming = (async () => {
      for await (const part of provider()('gpt-4.1').stream(requestOf(), { signal: controller.signal })) {
        parts.push(part.type);
        if (part.type === 'text-delta') controller.abort(reason);
      }
    })();
    await expect(consuming).rejects.toBe(reason);
    await server.requests[0]?.closed;
    expect(server.requests[0]?.isReplyFinished()).toBe(false);
    expect(parts).not.toContain('finish');
  });

  it('leaves no listener on a signal that many requests shared', async () => {
    const controller = new AbortController();
    const model = provider()('gpt-4.1');
    for (let turn = 0; turn < 12; turn += 1) {
      server.reply(responsesStream(textAnswer([`turn ${turn}`])));
      expect(textOf(await collectParts(model, requestOf(), controller.signal))).toBe(`turn ${turn}`);
    }
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('an already aborted signal sends nothing', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(collectParts(provider()('gpt-4.1'), requestOf(), controller.signal)).rejects.toThrow('stop');
    expect(server.requests).toHaveLength(0);
  });
});

describe('what a request carries', () => {
  it('merges providerOptions.openai into the body, nested objects key by key', async () => {
    server.reply(responsesStream(textAnswer(['{}'])));
    await collectParts(
      provider()('gpt-5'),
      requestOf({
        output: { type: 'json', schema: { type: 'object' } },
        providerOptions: {
          openai: { reasoning: { effort: 'low', summary: 'auto' }, text: { verbosity: 'low' }, store: true },
          anthropic: { thinking: { type: 'enabled' } },
        },
      }),
    );
    const { body } = server.requests[0] ?? {};
    expect(body).toMatchObject({
      reasoning: { effort: 'low', summary: 'auto' },
      store: true,
      text: { verbosity: 'low', format: { type: 'json_schema', name: 'output' } },
      stream: true,
    });
    expect(body.thinking).toBeUndefined();
  });

  it('maps settings: temperature, top_p, max_output_tokens (stop and seed do not exist in Responses)', async () => {
    server.reply(responsesStream(textAnswer(['ok'])), responsesStream(textAnswer(['ok'])));
    const settings = { temperature: 0.2, topP: 0.9, maxOutputTokens: 500, stopSequences: ['END'], seed: 7 };
    await collectParts(provider()('gpt-4.1'), requestOf({ settings }));
    const body = server.requests[0]?.body;
    expect(body).toMatchObject({ temperature: 0.2, top_p: 0.9, max_output_tokens: 500 });
    expect(body.stop).toBeUndefined();
    expect(body.seed).toBeUndefined();
    // Reasoning models refuse sampling settings.
    await collectParts(provider()('o4-mini'), requestOf({ settings }));
    expect(server.requests[1]?.body).toMatchObject({ max_output_tokens: 500 });
    expect(server.requests[1]?.body.temperature).toBeUndefined();
    expect(server.requests[1]?.body.top_p).toBeUndefined();
  });

  it('asks for structured output as text.format json_schema, strict only when the schema allows it', async () => {
    server.reply(responsesStream(textAnswer(['{}'])), responsesStream(textAnswer(['{}'])));
    const closed = {
      type: 'object',
      properties: { total: { type: 'number' }, items: { type: 'array', items: { type: 'string' } } },
      required: ['total', 'items'],
      additionalProperties: false,
    };
    await collectParts(
      provider()('gpt-4.1'),
      requestOf({
        output: { type: 'json', schema: closed, name: 'order summary', description: 'The order.' },
      }),
    );
    expect(server.requests[0]?.body.text).toEqual({
      format: {
        type: 'json_schema',
        name: 'order_summary',
        schema: closed,
        strict: true,
        description: 'The order.',
      },
    });
    const open = {
      type: 'object',
      properties: { total: { type: 'number' }, note: { type: 'string' } },
      required: ['total'],
    };
    await collectParts(provider()('gpt-4.1'), requestOf({ output: { type: 'json', schema: open } }));
    expect(server.requests[1]?.body.text).toEqual({
      format: { type: 'json_schema', name: 'output', schema: open, strict: false },
    });
  });

  it('sends user images and files as input_image and input_file', async () => {
    server.reply(responsesStream(textAnswer(['ok'])));
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47]);
    await collectParts(
      provider()('gpt-4.1'),
      requestOf({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is in these?' },
              { type: 'image', data: png, mediaType: 'image/png' },
              { type: 'image', data: new URL('https://example.com/cat.jpg') },
              { type: 'image', data: 'R0lGODlh', mediaType: 'image/gif' },
              {
                type: 'file',
                data: new Uint8Array([37, 80, 68, 70]),
                mediaType: 'application/pdf',
                filename: 'a.pdf',
              },
              { type: 'file', data: new URL('https://example.com/b.pdf'), mediaType: 'application/pdf' },
            ],
          },
        ],
      }),
    );
    expect(server.requests[0]?.body.input).toEqual([
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'What is in these?' },
          { type: 'input_image', image_url: 'data:image/png;base64,iVBORw==', detail: 'auto' },
          { type: 'input_image', image_url: 'https://example.com/cat.jpg', detail: 'auto' },
          { type: 'input_image', image_url: 'data:image/gif;base64,R0lGODlh', detail: 'auto' },
          { type: 'input_file', file_data: 'data:application/pdf;base64,JVBERg==', filename: 'a.pdf' },
          { type: 'input_file', file_url: 'https://example.com/b.pdf' },
        ],
      },
    ]);
  });

  it('refuses an image given as bytes without a media type, before sending anything', async () => {
    const { error } = await collectUntilError(
      provider()('gpt-4.1'),
      requestOf({ messages: [{ role: 'user', content: [{ type: 'image', data: new Uint8Array([1]) }] }] }),
    );
    expect(ConfigurationError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('mediaType');
    expect(server.requests).toHaveLength(0);
  });

  it('sends history: reasoning items back with their encrypted content, function calls, and their outputs', async () => {
    server.reply(responsesStream(textAnswer(['done'])));
    await collectParts(
      provider()('gpt-5'),
      requestOf({
        messages: [
          { role: 'user', content: 'What is the weather in Paris?' },
          {
            role: 'assistant',
            content: '',
            reasoning: [
              { text: 'Need the weather tool.', provider: 'openai', id: 'rs_1', redactedData: 'gAAAA-1' },
              { text: 'Claude thinking', provider: 'anthropic', signature: 'sig' },
            ],
            toolCalls: [{ id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' }],
          },
          {
            role: 'tool',
            toolCallId: 'call_1',
            toolName: 'weather',
            content: '{"temperature":21}',
            artifacts: [
              { name: 'map.png', mediaType: 'image/png', data: new Uint8Array([1, 2, 3]) },
              { name: 'notes.txt', mediaType: 'text/plain', data: 'sunny' },
            ],
          },
          { role: 'assistant', content: 'It is 21 °C.' },
          { role: 'user', content: 'Thanks' },
        ],
      }),
    );
    expect(server.requests[0]?.body.input).toEqual([
      { role: 'user', content: 'What is the weather in Paris?' },
      {
        type: 'reasoning',
        id: 'rs_1',
        summary: [{ type: 'summary_text', text: 'Need the weather tool.' }],
        encrypted_content: 'gAAAA-1',
      },
      { type: 'function_call', call_id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' },
      {
        type: 'function_call_output',
        call_id: 'call_1',
        output: [
          { type: 'input_text', text: '{"temperature":21}' },
          { type: 'input_image', image_url: 'data:image/png;base64,AQID' },
          { type: 'input_text', text: 'notes.txt:\nsunny' },
        ],
      },
      { role: 'assistant', content: 'It is 21 °C.' },
      { role: 'user', content: 'Thanks' },
    ]);
  });
});

describe('clients and headers', () => {
  it('sends the organization, project and custom headers', async () => {
    server.reply(responsesStream(textAnswer(['ok'])));
    await collectParts(
      provider({ organization: 'org-1', project: 'proj-1', headers: { 'x-team': 'search' } })('gpt-4.1'),
    );
    expect(server.requests[0]?.headers).toMatchObject({
      'openai-organization': 'org-1',
      'openai-project': 'proj-1',
      'x-team': 'search',
    });
  });

  it('uses a client the user configured, with its own retries turned off', async () => {
    const client = new OpenAI({ apiKey: 'sk-own', baseURL: server.baseURL, maxRetries: 5 });
    server.reply(errorReply(500, { message: 'boom', type: 'server_error' }));
    const { error } = await collectUntilError(createOpenAI({ client, maxRetries: 0 })('gpt-4.1'));
    expect(ModelUnavailableError.isInstance(error)).toBe(true);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.headers.authorization).toBe('Bearer sk-own');
  });

  it('uses a custom fetch', async () => {
    const seen: string[] = [];
    const recordingFetch: typeof fetch = (input, init) => {
      seen.push(String(input instanceof Request ? input.url : input));
      return fetch(input, init);
    };
    server.reply(responsesStream(textAnswer(['ok'])));
    await collectParts(provider({ fetch: recordingFetch })('gpt-4.1'));
    expect(seen).toEqual([`${server.baseURL}/responses`]);
  });
});
