import type { ModelV1 } from '@ghost/core';
import {
  ModelAuthenticationError,
  ModelContextOverflowError,
  ModelRateLimitError,
  type ModelReasoning,
  type ModelRequest,
  ModelResponseError,
  type ModelStreamPart,
  ModelUnavailableError,
} from '@ghost/core/provider';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAnthropic } from './anthropic-provider.js';
import {
  answer,
  blockEvents,
  errorBody,
  MessagesServer,
  messageEnd,
  messageStart,
  ping,
  type SseEvent,
} from './test-support/messages-server.js';

let server: MessagesServer;

beforeEach(async () => {
  server = await MessagesServer.start();
});

afterEach(async () => {
  await server.close();
});

function model(settings: Parameters<typeof createAnthropic>[0] = {}, modelId = 'claude-sonnet-4-5'): ModelV1 {
  return createAnthropic({ apiKey: 'test-key', baseURL: server.baseURL, ...settings })(modelId);
}

function request(init: Partial<ModelRequest> = {}): ModelRequest {
  return { instructions: 'Be brief.', messages: [{ role: 'user', content: 'Hi' }], tools: [], ...init };
}

async function collect(
  target: ModelV1,
  input: ModelRequest,
  signal = new AbortController().signal,
): Promise<ModelStreamPart[]> {
  const parts: ModelStreamPart[] = [];
  for await (const part of target.stream(input, { signal })) parts.push(part);
  return parts;
}

/** The parts produced before the stream failed, and the failure. */
async function failure(
  target: ModelV1,
  input: ModelRequest,
): Promise<{ error: unknown; parts: ModelStreamPart[] }> {
  const parts: ModelStreamPart[] = [];
  try {
    for await (const part of target.stream(input, { signal: new AbortController().signal })) parts.push(part);
  } catch (error) {
    return { error, parts };
  }
  throw new Error(`the stream succeeded with ${JSON.stringify(parts)}`);
}

function reasoningOf(parts: readonly ModelStreamPart[]): ModelReasoning[] {
  return parts.flatMap((part) => (part.type === 'reasoning-end' ? [part.reasoning] : []));
}

describe('text streaming', () => {
  it('streams text deltas, response metadata, usage and the finish, ignoring pings', async () => {
    server.enqueue({
      ...answer([{ type: 'text', deltas: ['Hel', 'lo', ' there'] }], {
        id: 'msg_text',
        model: 'claude-sonnet-4-5-20250929',
      }),
      chunkBytes: 7,
    });
    const parts = await collect(model(), request());
    expect(parts).toEqual([
      { type: 'response-metadata', id: 'msg_text', modelId: 'claude-sonnet-4-5-20250929' },
      { type: 'text-delta', text: 'Hel' },
      { type: 'text-delta', text: 'lo' },
      { type: 'text-delta', text: ' there' },
      { type: 'usage', usage: { inputTokens: 10, outputTokens: 5 } },
      { type: 'finish', reason: 'stop', rawReason: 'end_turn' },
    ]);
  });

  it('sends the Messages request the API documents, through the official SDK', async () => {
    server.enqueue(answer([{ type: 'text', deltas: ['ok'] }]));
    await collect(
      model({ headers: { 'anthropic-beta': 'test-beta' } }),
      request({ settings: { temperature: 0.2, topP: 0.5, seed: 7, stopSequences: ['END'] } }),
    );
    const [sent] = server.requests;
    expect(sent?.method).toBe('POST');
    expect(sent?.path).toBe('/v1/messages');
    expect(sent?.headers.authorization).toBe('Bearer test-key');
    expect(sent?.headers['anthropic-version']).toBe('2026-10-21');
    expect(sent?.headers['anthropic-beta']).toBe('test-beta');
    expect(sent?.body).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 8192,
      stream: true,
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: { type: 'ephemeral' } }] },
      ],
      stop_sequences: ['END'],
    });
    // The API version the SDK speaks rejects sampling parameters, so they are never sent.
    expect(sent?.body).not.toHaveProperty('temperature');
    expect(sent?.body).not.toHaveProperty('top_p');
  });

  it('takes max_tokens from settings.maxOutputTokens, and a smaller default for Claude 3 models', async () => {
    server.enqueue(answer([{ type: 'text', deltas: ['a'] }]), answer([{ type: 'text', deltas: ['b'] }]));
    await collect(model(), request({ settings: { maxOutputTokens: 321 } }));
    await collect(model({}, 'claude-3-haiku-20240307'), request());
    expect(server.requests.map((sent) => sent.body.max_tokens)).toEqual([321, 4096]);
  });

  it('leaves system out when there are no instructions', async () => {
    server.enqueue(answer([{ type: 'text', deltas: ['a'] }]));
    await collect(model(), request({ instructions: '' }));
    expect(server.requests[0]?.body).not.toHaveProperty('system');
  });
});

describe('extended thinking', () => {
  const thinkingAnswer = answer(
    [
      { type: 'thinking', deltas: ['Let me ', 'think.'], signature: 'sig-one==' },
      { type: 'redacted_thinking', data: 'opaque-redacted-bytes' },
      { type: 'text', deltas: ['I will look it up.'] },
      { type: 'tool_use', id: 'toolu_01', name: 'lookup', json: ['{"q":', '"x"}'] },
    ],
    { id: 'msg_think' },
  );

  it('streams thinking as reasoning and ends each block with its text and signature', async () => {
    server.enqueue(thinkingAnswer);
    const parts = await collect(
      model(),
      request({ providerOptions: { anthropic: { thinking: { type: 'enabled', budget_tokens: 2048 } } } }),
    );
    expect(parts.slice(0, 6)).toEqual([
      { type: 'response-metadata', id: 'msg_think', modelId: 'claude-sonnet-4-5-20250929' },
      { type: 'reasoning-delta', text: 'Let me ' },
      { type: 'reasoning-delta', text: 'think.' },
      {
        type: 'reasoning-end',
        reasoning: { text: 'Let me think.', provider: 'anthropic', signature: 'sig-one==' },
      },
      {
        type: 'reasoning-end',
        reasoning: { text: '', provider: 'anthropic', redactedData: 'opaque-redacted-bytes' },
      },
      { type: 'text-delta', text: 'I will look it up.' },
    ]);
    const body = server.requests[0]?.body;
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    // Thinking tokens count toward max_tokens, so the default makes room for the budget.
    expect(body.max_tokens).toBe(8192 + 2048);
  });

  it('sends the thinking back unchanged on the next turn, before the text and tool_use blocks', async () => {
    server.enqueue(thinkingAnswer, answer([{ type: 'text', deltas: ['Found it.'] }]));
    const thinkingOn = { anthropic: { thinking: { type: 'enabled', budget_tokens: 2048 } } };
    const first = await collect(model(), request({ providerOptions: thinkingOn }));
    await collect(
      model(),
      request({
        providerOptions: thinkingOn,
        messages: [
          { role: 'user', content: 'Hi' },
          {
            role: 'assistant',
            content: 'I will look it up.',
            toolCalls: [{ id: 'toolu_01', name: 'lookup', arguments: '{"q":"x"}' }],
            reasoning: [...reasoningOf(first), { text: 'from elsewhere', provider: 'openai', id: 'rs_1' }],
          },
          { role: 'tool', toolCallId: 'toolu_01', toolName: 'lookup', content: '{"hits":1}' },
        ],
      }),
    );
    expect(server.requests[1]?.body.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Let me think.', signature: 'sig-one==' },
        { type: 'redacted_thinking', data: 'opaque-redacted-bytes' },
        { type: 'text', text: 'I will look it up.' },
        { type: 'tool_use', id: 'toolu_01', name: 'lookup', input: { q: 'x' } },
      ],
    });
  });
});

describe('tool calls', () => {
  const lookup = {
    name: 'lookup',
    description: 'Looks a word up.',
    inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  };
  const weather = {
    name: 'weather',
    description: 'The weather in a city.',
    inputSchema: { type: 'object', properties: { city: { type: 'string' } } },
  };

  it('streams parallel tool calls whose arguments interleave, by index, with their ids', async () => {
    const start = (index: number, id: string, name: string) =>
      blockEvents(index, { type: 'tool_use', id, name, json: [] })[0] as SseEvent;
    const json = (index: number, partial_json: string): SseEvent => ({
      event: 'content_block_delta',
      data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } },
    });
    const stop = (index: number): SseEvent => ({
      event: 'content_block_stop',
      data: { type: 'content_block_stop', index },
    });
    server.enqueue({
      kind: 'stream',
      events: [
        messageStart('msg_tools', 'claude-sonnet-4-5', { input_tokens: 30 }),
        start(0, 'toolu_A', 'lookup'),
        start(1, 'toolu_B', 'weather'),
        json(1, '{"ci'),
        json(0, '{"q":'),
        ping,
        json(1, 'ty":"Paris"}'),
        json(0, '"ghost"}'),
        stop(1),
        stop(0),
        ...messageEnd('tool_use', { output_tokens: 40 }),
      ],
    });
    const parts = await collect(model(), request({ tools: [lookup, weather] }));
    expect(parts.filter((part) => part.type.startsWith('tool-call'))).toEqual([
      { type: 'tool-call-start', index: 0, id: 'toolu_A', name: 'lookup' },
      { type: 'tool-call-start', index: 1, id: 'toolu_B', name: 'weather' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '{"ci' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"q":' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: 'ty":"Paris"}' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '"ghost"}' },
      { type: 'tool-call-stop', index: 1 },
      { type: 'tool-call-stop', index: 0 },
    ]);
    expect(parts.at(-1)).toEqual({ type: 'finish', reason: 'tool-calls', rawReason: 'tool_use' });
  });

  it('sends tool definitions with a cache marker on the last, and results as tool_result blocks in one user turn', async () => {
    server.enqueue(answer([{ type: 'text', deltas: ['Paris is sunny.'] }]));
    await collect(
      model(),
      request({
        tools: [lookup, weather],
        messages: [
          { role: 'user', content: 'Look up ghost and the weather in Paris.' },
          {
            role: 'assistant',
            content: '',
            toolCalls: [
              { id: 'toolu_A', name: 'lookup', arguments: '{"q":"ghost"}' },
              { id: 'toolu_B', name: 'weather', arguments: '{"city":"Paris"}' },
            ],
          },
          {
            role: 'tool',
            toolCallId: 'toolu_A',
            toolName: 'lookup',
            content: 'No such word.',
            isError: true,
          },
          { role: 'tool', toolCallId: 'toolu_B', toolName: 'weather', content: '{"sky":"sunny"}' },
        ],
      }),
    );
    const body = server.requests[0]?.body;
    expect(body.tools).toEqual([
      { name: 'lookup', description: 'Looks a word up.', input_schema: lookup.inputSchema },
      {
        name: 'weather',
        description: 'The weather in a city.',
        input_schema: weather.inputSchema,
        cache_control: { type: 'ephemeral' },
      },
    ]);
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Look up ghost and the weather in Paris.' }] },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'toolu_A', name: 'lookup', input: { q: 'ghost' } },
          { type: 'tool_use', id: 'toolu_B', name: 'weather', input: { city: 'Paris' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_A', content: 'No such word.', is_error: true },
          {
            type: 'tool_result',
            tool_use_id: 'toolu_B',
            content: '{"sky":"sunny"}',
            cache_control: { type: 'ephemeral' },
          },
        ],
      },
    ]);
  });

  it('sends arguments that are not a JSON object as an empty input, and artifacts inside the tool result', async () => {
    server.enqueue(answer([{ type: 'text', deltas: ['ok'] }]));
    await collect(
      model({ cache: false }),
      request({
        messages: [
          { role: 'user', content: 'Chart it.' },
          {
            role: 'assistant',
            content: 'Drawing.',
            toolCalls: [{ id: 'toolu_C', name: 'chart', arguments: '{"broken' }],
          },
          {
            role: 'tool',
            toolCallId: 'toolu_C',
            toolName: 'chart',
            content: 'Here is the chart.',
            artifacts: [
              { name: 'chart.png', mediaType: 'image/png', data: new Uint8Array([137, 80, 78, 71]) },
              { name: 'data.csv', mediaType: 'text/csv', data: 'a,b\n1,2' },
              { name: 'model.bin', mediaType: 'application/octet-stream', data: new Uint8Array(3) },
            ],
          },
        ],
      }),
    );
    const [, assistant, results] = server.requests[0]?.body.messages ?? [];
    expect(assistant.content[1]).toEqual({ type: 'tool_use', id: 'toolu_C', name: 'chart', input: {} });
    expect(results.content).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_C',
        content: [
          { type: 'text', text: 'Here is the chart.' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw==' } },
          { type: 'text', text: 'data.csv:\na,b\n1,2' },
          {
            type: 'text',
            text: '[model.bin (application/octet-stream, 3 bytes) is not shown: Anthropic reads images, PDFs and text only]',
          },
        ],
      },
    ]);
  });
});

describe('prompt caching', () => {
  const tools = [
    { name: 'lookup', description: 'Looks up.', inputSchema: { type: 'object', properties: {} } },
  ];

  function cacheMarkers(body: unknown): number {
    return JSON.stringify(body).split('"cache_control"').length - 1;
  }

  it('marks the last tool, the system block and the final user block by default', async () => {
    server.enqueue(answer([{ type: 'text', deltas: ['ok'] }]));
    await collect(model(), request({ tools }));
    const body = server.requests[0]?.body;
    expect(cacheMarkers(body)).toBe(3);
    expect(body.tools[0].cache_control).toEqual({ type: 'ephemeral' });
    expect(body.system[0].cache_control).toEqual({ type: 'ephemeral' });
    expect(body.messages[0].content[0].cache_control).toEqual({ type: 'ephemeral' });
  });

  it('sends no marker with createAnthropic({ cache: false }) or providerOptions.anthropic.cache = false', async () => {
    server.enqueue(
      answer([{ type: 'text', deltas: ['a'] }]),
      answer([{ type: 'text', deltas: ['b'] }]),
      answer([{ type: 'text', deltas: ['c'] }]),
    );
    await collect(model({ cache: false }), request({ tools }));
    await collect(model(), request({ tools, providerOptions: { anthropic: { cache: false } } }));
    await collect(
      model({ cache: false }),
      request({ tools, providerOptions: { anthropic: { cache: true } } }),
    );
    expect(server.requests.map((sent) => cacheMarkers(sent.body))).toEqual([0, 0, 3]);
    expect(server.requests[1]?.body).not.toHaveProperty('cache');
  });
});

describe('usage', () => {
  it('counts cache reads and writes into inputTokens and reports them apart, with reasoning tokens', async () => {
    server.enqueue(
      answer([{ type: 'text', deltas: ['ok'] }], {
        startUsage: {
          input_tokens: 12,
          cache_read_input_tokens: 3000,
          cache_creation_input_tokens: 500,
          output_tokens: 1,
        },
        endUsage: { output_tokens: 250, output_tokens_details: { thinking_tokens: 200 } },
      }),
    );
    const parts = await collect(model(), request());
    expect(parts.find((part) => part.type === 'usage')).toEqual({
      type: 'usage',
      usage: {
        inputTokens: 3512,
        outputTokens: 250,
        cacheReadTokens: 3000,
        cacheWriteTokens: 500,
        reasoningTokens: 200,
      },
    });
  });

  it("takes message_delta's cumulative counts over message_start's, and leaves unreported counts undefined", async () => {
    server.enqueue(
      answer([{ type: 'text', deltas: ['ok'] }], {
        startUsage: { input_tokens: 40, cache_read_input_tokens: null, cache_creation_input_tokens: null },
        endUsage: {
          output_tokens: 9,
          input_tokens: 42,
          cache_read_input_tokens: 0,
          cache_creation_input_tokens: null,
        },
      }),
    );
    const parts = await collect(model(), request());
    const usage = parts.find((part) => part.type === 'usage');
    expect(usage).toEqual({ type: 'usage', usage: { inputTokens: 42, outputTokens: 9, cacheReadTokens: 0 } });
    expect(usage?.type === 'usage' && 'cacheWriteTokens' in usage.usage).toBe(false);
  });
});

describe('finish reasons', () => {
  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool-calls'],
    ['refusal', 'content-filter'],
    ['pause_turn', 'other'],
    ['a_reason_from_the_future', 'other'],
  ])('maps %s to %s and keeps the raw reason', async (raw, reason) => {
    server.enqueue(answer([{ type: 'text', deltas: ['x'] }], { stopReason: raw }));
    const parts = await collect(model(), request());
    expect(parts.at(-1)).toEqual({ type: 'finish', reason, rawReason: raw });
  });
});

describe('provider options and structured output', () => {
  it('passes providerOptions.anthropic fields into the body unchanged', async () => {
    server.enqueue(answer([{ type: 'text', deltas: ['ok'] }]));
    await collect(
      model(),
      request({
        providerOptions: {
          anthropic: {
            metadata: { user_id: 'u-1' },
            tool_choice: { type: 'auto', disable_parallel_tool_use: true },
          },
          openai: { reasoning: { effort: 'high' } },
        },
      }),
    );
    const body = server.requests[0]?.body;
    expect(body.metadata).toEqual({ user_id: 'u-1' });
    expect(body.tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true });
    expect(body).not.toHaveProperty('reasoning');
  });

  it('asks for structured output with output_config.format, merged with other output_config fields', async () => {
    server.enqueue(answer([{ type: 'text', deltas: ['{"city":"Paris","days":3}'] }]));
    await collect(
      model(),
      request({
        output: {
          type: 'json',
          schema: {
            type: 'object',
            properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1 } },
            required: ['city', 'days'],
          },
        },
        providerOptions: { anthropic: { output_config: { effort: 'low' } } },
      }),
    );
    expect(server.requests[0]?.body.output_config).toEqual({
      effort: 'low',
      format: {
        type: 'json_schema',
        schema: {
          type: 'object',
          properties: { city: { type: 'string' }, days: { type: 'integer', description: '{minimum: 1}' } },
          required: ['city', 'days'],
          additionalProperties: false,
        },
      },
    });
  });

  it('refuses provider options that would contradict the request, before sending anything', async () => {
    const { error } = await failure(model(), request({ providerOptions: { anthropic: { messages: [] } } }));
    expect((error as Error).message).toMatch(/'messages' is built by Ghost/);
    const { error: badCache } = await failure(
      model(),
      request({ providerOptions: { anthropic: { cache: 'no' } } }),
    );
    expect((badCache as Error).message).toMatch(/cache must be true or false/);
    expect(server.requests).toHaveLength(0);
  });
});

describe('images and documents', () => {
  it('sends image parts as base64 or URL sources, and files as documents', async () => {
    server.enqueue(answer([{ type: 'text', deltas: ['seen'] }]));
    await collect(
      model({ cache: false }),
      request({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What are these?' },
              { type: 'image', data: new Uint8Array([255, 216, 255]), mediaType: 'image/jpeg' },
              { type: 'image', data: new URL('https://example.com/cat.png') },
              { type: 'image', data: new URL('data:image/gif;base64,R0lGOD') },
              { type: 'image', data: 'iVBORw0K', mediaType: 'image/png' },
              {
                type: 'file',
                data: new Uint8Array([37, 80, 68, 70]),
                mediaType: 'application/pdf',
                filename: 'a.pdf',
              },
              { type: 'file', data: 'https://example.com/report.pdf', mediaType: 'application/pdf' },
              { type: 'file', data: Buffer.from('plain notes').toString('base64'), mediaType: 'text/plain' },
            ],
          },
        ],
      }),
    );
    expect(server.requests[0]?.body.messages[0].content).toEqual([
      { type: 'text', text: 'What are these?' },
      { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
      { type: 'image', source: { type: 'base64', media_type: 'image/gif', data: 'R0lGOD' } },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0K' } },
      {
        type: 'document',
        title: 'a.pdf',
        source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERg==' },
      },
      { type: 'document', source: { type: 'url', url: 'https://example.com/report.pdf' } },
      { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain notes' } },
    ]);
  });

  it('fails before sending a part Anthropic cannot read', async () => {
    const { error } = await failure(
      model(),
      request({
        messages: [
          {
            role: 'user',
            content: [{ type: 'file', data: new Uint8Array(2), mediaType: 'application/zip' }],
          },
        ],
      }),
    );
    expect((error as Error).message).toMatch(/a file of type application\/zip/);
    const { error: noType } = await failure(
      model(),
      request({ messages: [{ role: 'user', content: [{ type: 'image', data: new Uint8Array(2) }] }] }),
    );
    expect((noType as Error).message).toMatch(/needs its mediaType/);
    expect(server.requests).toHaveLength(0);
  });
});

describe('HTTP errors and retries', () => {
  it('retries a 429 after its retry-after, announcing the retry, then streams', async () => {
    server.enqueue(
      {
        kind: 'error',
        status: 429,
        body: errorBody(
          'rate_limit_error',
          'Number of request tokens has exceeded your per-minute rate limit',
        ),
        headers: { 'retry-after': '1' },
      },
      answer([{ type: 'text', deltas: ['after the wait'] }]),
    );
    const parts = await collect(model(), request());
    const [retry, ...rest] = parts;
    expect(retry).toMatchObject({ type: 'retry', attempt: 2, delayMs: 1000 });
    expect(ModelRateLimitError.isInstance(retry?.type === 'retry' ? retry.error : undefined)).toBe(true);
    expect(rest.filter((part) => part.type === 'text-delta')).toEqual([
      { type: 'text-delta', text: 'after the wait' },
    ]);
    expect(server.requests).toHaveLength(2);
  });

  it('fails a 401 at once with ModelAuthenticationError naming ANTHROPIC_API_KEY', async () => {
    server.enqueue({
      kind: 'error',
      status: 401,
      body: errorBody('authentication_error', 'invalid x-api-key'),
    });
    const { error } = await failure(model(), request());
    expect(ModelAuthenticationError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('ANTHROPIC_API_KEY');
    expect((error as ModelAuthenticationError).statusCode).toBe(401);
    expect(server.requests).toHaveLength(1);
  });

  it('retries a 500, and gives up on 529 overloaded with ModelUnavailableError after maxRetries', async () => {
    server.enqueue(
      { kind: 'error', status: 500, body: errorBody('api_error', 'Internal server error') },
      answer([{ type: 'text', deltas: ['recovered'] }]),
    );
    const parts = await collect(model({ maxRetries: 1 }), request());
    expect(parts[0]).toMatchObject({ type: 'retry', attempt: 2 });
    expect(parts.at(-1)).toMatchObject({ type: 'finish', reason: 'stop' });

    server.enqueue(
      { kind: 'error', status: 529, body: errorBody('overloaded_error', 'Overloaded') },
      { kind: 'error', status: 529, body: errorBody('overloaded_error', 'Overloaded') },
    );
    const { error, parts: before } = await failure(model({ maxRetries: 1 }), request());
    expect(ModelUnavailableError.isInstance(error)).toBe(true);
    expect((error as ModelUnavailableError).statusCode).toBe(529);
    expect(before.map((part) => part.type)).toEqual(['retry']);
    expect(server.requests).toHaveLength(4);
  });

  it('maps a prompt that is too long to ModelContextOverflowError, not retried', async () => {
    server.enqueue({
      kind: 'error',
      status: 400,
      body: errorBody('invalid_request_error', 'prompt is too long: 210000 tokens > 200000 maximum'),
    });
    const { error } = await failure(model(), request());
    expect(ModelContextOverflowError.isInstance(error)).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  it('uses a client the user configured, with its own retries turned off so every retry is visible', async () => {
    const { default: Anthropic } = await import('@anthropic-ai/sdk');
    const client = new Anthropic({ apiKey: 'client-key', baseURL: server.baseURL, maxRetries: 5 });
    server.enqueue(
      { kind: 'error', status: 503, body: errorBody('api_error', 'unavailable') },
      answer([{ type: 'text', deltas: ['hi'] }]),
    );
    const parts = await collect(createAnthropic({ client, maxRetries: 1 })('claude-haiku-4-5'), request());
    expect(parts.map((part) => part.type)).toEqual([
      'retry',
      'response-metadata',
      'text-delta',
      'usage',
      'finish',
    ]);
    expect(server.requests[0]?.headers.authorization).toBe('Bearer client-key');
    expect(server.requests).toHaveLength(2);
  });
});

describe('errors inside the stream', () => {
  const overloaded: SseEvent = {
    event: 'error',
    data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
  };

  it('retries an overloaded_error event that comes before any content', async () => {
    server.enqueue(
      {
        kind: 'stream',
        events: [messageStart('msg_lost', 'claude-sonnet-4-5', { input_tokens: 5 }), ping, overloaded],
      },
      answer([{ type: 'text', deltas: ['second try'] }], { id: 'msg_kept' }),
    );
    const parts = await collect(model(), request());
    expect(parts[0]).toMatchObject({ type: 'retry', attempt: 2 });
    expect(ModelUnavailableError.isInstance(parts[0]?.type === 'retry' ? parts[0].error : undefined)).toBe(
      true,
    );
    expect(parts.filter((part) => part.type === 'response-metadata')).toEqual([
      { type: 'response-metadata', id: 'msg_kept', modelId: 'claude-sonnet-4-5-20250929' },
    ]);
  });

  it('fails with the mapped error when the event comes after content, never retrying a begun answer', async () => {
    server.enqueue({
      kind: 'stream',
      events: [
        messageStart('msg_1', 'claude-sonnet-4-5', { input_tokens: 5 }),
        ...blockEvents(0, { type: 'text', deltas: ['partial'] }).slice(0, 2),
        overloaded,
      ],
    });
    const { error, parts } = await failure(model(), request());
    expect(ModelUnavailableError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/overloaded_error: Overloaded/);
    expect(parts.map((part) => part.type)).toEqual(['response-metadata', 'text-delta']);
    expect(server.requests).toHaveLength(1);
  });

  it('fails with ModelResponseError when the stream is cut mid-event', async () => {
    server.enqueue({
      kind: 'stream',
      events: [
        messageStart('msg_1', 'claude-sonnet-4-5', { input_tokens: 5 }),
        ...blockEvents(0, { type: 'text', deltas: ['Hel'] }).slice(0, 2),
      ],
      tail: 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_del',
    });
    const { error, parts } = await failure(model(), request());
    expect(ModelResponseError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/ended before message_stop/);
    expect(parts.some((part) => part.type === 'finish')).toBe(false);
  });

  it('fails with ModelResponseError when the connection drops mid-event', async () => {
    server.enqueue({
      kind: 'stream',
      events: [
        messageStart('msg_1', 'claude-sonnet-4-5', { input_tokens: 5 }),
        ...blockEvents(0, { type: 'text', deltas: ['Hel'] }).slice(0, 2),
      ],
      tail: 'event: content_block_delta\ndata: {"type":"content_bl',
      ending: 'destroy',
    });
    const { error, parts } = await failure(model(), request());
    expect(ModelResponseError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/was cut off/);
    expect(parts.some((part) => part.type === 'finish')).toBe(false);
  });

  it('retries a connection that drops before any content', async () => {
    server.enqueue(
      {
        kind: 'stream',
        events: [messageStart('msg_lost', 'claude-sonnet-4-5', { input_tokens: 5 })],
        ending: 'destroy',
      },
      answer([{ type: 'text', deltas: ['reconnected'] }]),
    );
    const parts = await collect(model(), request());
    expect(parts[0]).toMatchObject({ type: 'retry', attempt: 2 });
    expect(ModelUnavailableError.isInstance(parts[0]?.type === 'retry' ? parts[0].error : undefined)).toBe(
      true,
    );
    expect(parts.filter((part) => part.type === 'text-delta')).toEqual([
      { type: 'text-delta', text: 'reconnected' },
    ]);
  });

  it('fails with ModelResponseError when the stream ends without message_stop', async () => {
    const { events } = answer([{ type: 'text', deltas: ['done?'] }]);
    server.enqueue({ kind: 'stream', events: events.slice(0, -1) });
    const { error, parts } = await failure(model(), request());
    expect(ModelResponseError.isInstance(error)).toBe(true);
    expect(parts.some((part) => part.type === 'finish')).toBe(false);
  });

  it('fails with ModelResponseError on an event out of order', async () => {
    server.enqueue({ kind: 'stream', events: blockEvents(0, { type: 'text', deltas: ['x'] }) });
    const { error } = await failure(model(), request());
    expect(ModelResponseError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/before message_start/);
  });
});

describe('streams a server may send', () => {
  it('reads a tool_use whose input came whole in content_block_start, and closes blocks left open at message_stop', async () => {
    server.enqueue({
      kind: 'stream',
      events: [
        messageStart('msg_whole', 'claude-sonnet-4-5', { input_tokens: 5 }),
        {
          event: 'content_block_start',
          data: {
            type: 'content_block_start',
            index: 0,
            content_block: { type: 'tool_use', id: 'toolu_whole', name: 'lookup', input: { q: 'ghost' } },
          },
        },
        { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
        ...blockEvents(1, { type: 'thinking', deltas: ['unfinished'], signature: 'sig-open' }).slice(0, -1),
        ...messageEnd('tool_use', { output_tokens: 3 }),
      ],
    });
    const parts = await collect(model(), request());
    expect(parts.filter((part) => part.type !== 'response-metadata' && part.type !== 'usage')).toEqual([
      { type: 'tool-call-start', index: 0, id: 'toolu_whole', name: 'lookup' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"q":"ghost"}' },
      { type: 'tool-call-stop', index: 0 },
      { type: 'reasoning-delta', text: 'unfinished' },
      {
        type: 'reasoning-end',
        reasoning: { text: 'unfinished', provider: 'anthropic', signature: 'sig-open' },
      },
      { type: 'finish', reason: 'tool-calls', rawReason: 'tool_use' },
    ]);
  });

  it('skips server tool blocks and citation deltas, and refuses a delta for a block that never started', async () => {
    server.enqueue(
      {
        kind: 'stream',
        events: [
          messageStart('msg_server_tool', 'claude-sonnet-4-5', { input_tokens: 5 }),
          {
            event: 'content_block_start',
            data: {
              type: 'content_block_start',
              index: 0,
              content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} },
            },
          },
          {
            event: 'content_block_delta',
            data: {
              type: 'content_block_delta',
              index: 0,
              delta: { type: 'input_json_delta', partial_json: '{}' },
            },
          },
          { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
          ...blockEvents(1, { type: 'text', deltas: ['cited'] }).slice(0, 2),
          {
            event: 'content_block_delta',
            data: { type: 'content_block_delta', index: 1, delta: { type: 'citations_delta', citation: {} } },
          },
          { event: 'content_block_stop', data: { type: 'content_block_stop', index: 1 } },
          ...messageEnd('end_turn', { output_tokens: 3 }),
        ],
      },
      {
        kind: 'stream',
        events: [
          messageStart('msg_bad', 'claude-sonnet-4-5', { input_tokens: 5 }),
          ...blockEvents(0, { type: 'text', deltas: ['a'] }).slice(0, 2),
          {
            event: 'content_block_delta',
            data: { type: 'content_block_delta', index: 7, delta: { type: 'text_delta', text: 'stray' } },
          },
        ],
      },
    );
    const parts = await collect(model(), request());
    expect(parts.filter((part) => part.type === 'text-delta' || part.type.startsWith('tool'))).toEqual([
      { type: 'text-delta', text: 'cited' },
    ]);
    const { error } = await failure(model(), request());
    expect(ModelResponseError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/content block 7, which never started/);
  });
});

describe('abort', () => {
  it('closes the HTTP stream at once when the signal aborts mid-stream', async () => {
    server.enqueue({
      kind: 'stream',
      events: [
        messageStart('msg_1', 'claude-sonnet-4-5', { input_tokens: 5 }),
        ...blockEvents(0, { type: 'text', deltas: ['Hel'] }).slice(0, 2),
      ],
      ending: 'hold',
    });
    const controller = new AbortController();
    const closed = server.streamClosed();
    const reason = new Error('the user stopped the run');
    const parts: ModelStreamPart[] = [];
    const reading = (async () => {
      for await (const part of model().stream(request(), { signal: controller.signal })) {
        parts.push(part);
        if (part.type === 'text-delta') controller.abort(reason);
      }
    })();
    await expect(reading).rejects.toBe(reason);
    await closed;
    expect(server.closedStreams).toBe(1);
    expect(parts.map((part) => part.type)).toEqual(['response-metadata', 'text-delta']);
  });
});
