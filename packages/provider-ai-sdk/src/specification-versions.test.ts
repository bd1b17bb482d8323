import { createOpenAI as createOpenAIV2 } from '@ai-sdk/openai-v2';
import { createOpenAI as createOpenAIV4 } from '@ai-sdk/openai-v4';
import type { ModelMessage } from '@ghost/core';
import { ModelRateLimitError, ModelResponseError } from '@ghost/core/provider';
import { afterEach, describe, expect, it } from 'vitest';
import { fromAISDK } from './from-ai-sdk.js';
import { LoopbackServer } from './test-support/loopback-server.js';
import {
  assistantMessageFrom,
  modelRequest,
  streamAll,
  streamUntilError,
  textOf,
} from './test-support/model-run.js';
import {
  chatDelta,
  chatDone,
  chatTextStream,
  chatUsage,
  openaiError,
  ResponsesEvents,
} from './test-support/openai-wire.js';

// The same loopback servers, driven through the other specification lines: @ai-sdk/openai 2.x
// implements LanguageModelV2 (ai 5) and @ai-sdk/openai 4.x LanguageModelV4 (ai 7).

let server: LoopbackServer;
afterEach(async () => {
  await server?.close();
});

const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47]);

const parallelToolCalls = {
  kind: 'sse',
  events: [
    chatDelta({ role: 'assistant', content: null }),
    chatDelta({
      tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'lookup', arguments: '' } }],
    }),
    chatDelta({
      tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'lookup', arguments: '' } }],
    }),
    chatDelta({ tool_calls: [{ index: 0, function: { arguments: '{"topic":"refunds"}' } }] }),
    chatDelta({ tool_calls: [{ index: 1, function: { arguments: '{"topic":"shipping"}' } }] }),
    chatDelta({}, 'tool_calls'),
    chatDone,
  ],
} as const;

describe('specification v2 (@ai-sdk/openai 2.x)', () => {
  function v2Chat() {
    const openai = createOpenAIV2({ apiKey: 'sk-test', baseURL: `${server.origin}/v1` });
    const model = openai.chat('gpt-4.1');
    expect(model.specificationVersion).toBe('v2');
    return fromAISDK(model);
  }

  it('streams text and reads the flat usage and the bare finish reason', async () => {
    server = await LoopbackServer.start([
      chatTextStream(['Hello ', 'there.'], 'stop', {
        prompt_tokens: 100,
        completion_tokens: 20,
        total_tokens: 120,
        prompt_tokens_details: { cached_tokens: 64 },
        completion_tokens_details: { reasoning_tokens: 8 },
      }),
    ]);
    const parts = await streamAll(v2Chat(), modelRequest());
    expect(parts).toEqual([
      { type: 'response-metadata', id: 'chatcmpl-ghost1', modelId: 'gpt-4.1-2025-04-14' },
      { type: 'text-delta', text: 'Hello ' },
      { type: 'text-delta', text: 'there.' },
      {
        type: 'usage',
        usage: {
          inputTokens: 100,
          outputTokens: 20,
          totalTokens: 120,
          cacheReadTokens: 64,
          reasoningTokens: 8,
        },
      },
      { type: 'finish', reason: 'stop', rawReason: 'stop' },
    ]);
  });

  it("turns v2's unknown finish reason into other", async () => {
    server = await LoopbackServer.start([chatTextStream(['x'], 'something_new')]);
    const parts = await streamAll(v2Chat(), modelRequest());
    expect(parts.at(-1)).toEqual({ type: 'finish', reason: 'other', rawReason: 'unknown' });
  });

  it('streams parallel tool calls and sends the calls and typed results back', async () => {
    server = await LoopbackServer.start([parallelToolCalls, chatTextStream(['Done.'])]);
    const model = v2Chat();
    const first = await streamAll(model, modelRequest());
    expect(first.filter((part) => part.type.startsWith('tool-call'))).toEqual([
      { type: 'tool-call-start', index: 0, id: 'call_a', name: 'lookup' },
      { type: 'tool-call-start', index: 1, id: 'call_b', name: 'lookup' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"topic":"refunds"}' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '{"topic":"shipping"}' },
      { type: 'tool-call-stop', index: 0 },
      { type: 'tool-call-stop', index: 1 },
    ]);
    expect(first.at(-1)).toEqual({ type: 'finish', reason: 'tool-calls', rawReason: 'tool-calls' });
    const messages: ModelMessage[] = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look' },
          { type: 'image', data: png, mediaType: 'image/png' },
        ],
      },
      assistantMessageFrom(first),
      { role: 'tool', toolCallId: 'call_a', toolName: 'lookup', content: '{"text":"5 days"}' },
      { role: 'tool', toolCallId: 'call_b', toolName: 'lookup', content: 'No entry.', isError: true },
    ];
    await streamAll(model, modelRequest({ messages }));
    expect(server.requests[1]?.body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw==' } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'lookup', arguments: '{"topic":"refunds"}' } },
          { id: 'call_b', type: 'function', function: { name: 'lookup', arguments: '{"topic":"shipping"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: '{"text":"5 days"}' },
      { role: 'tool', tool_call_id: 'call_b', content: 'No entry.' },
    ]);
  });

  it('round-trips Responses reasoning with its encrypted content', async () => {
    server = await LoopbackServer.start([
      new ResponsesEvents()
        .reasoning(0, 'rs_1', ['Plan.'], 'gAAAA-v2')
        .message(1, 'msg_1', ['Hi.'])
        .completed(null),
      new ResponsesEvents('resp_ghost2').message(0, 'msg_2', ['Again.']).completed(null),
    ]);
    const openai = createOpenAIV2({ apiKey: 'sk-test', baseURL: `${server.origin}/v1` });
    const model = fromAISDK(openai('gpt-5'));
    const stateless = { openai: { store: false, include: ['reasoning.encrypted_content'] } };
    const first = await streamAll(model, modelRequest({ providerOptions: stateless }));
    expect(first.find((part) => part.type === 'reasoning-end')).toEqual({
      type: 'reasoning-end',
      reasoning: {
        text: 'Plan.',
        provider: 'openai.responses',
        providerMetadata: { openai: { itemId: 'rs_1', reasoningEncryptedContent: 'gAAAA-v2' } },
      },
    });
    expect(first.some((part) => part.type === 'usage')).toBe(false);
    const messages: ModelMessage[] = [{ role: 'user', content: 'Hello' }, assistantMessageFrom(first)];
    await streamAll(model, modelRequest({ messages, providerOptions: stateless }));
    expect((server.body(1).input as unknown[])[1]).toEqual({
      type: 'reasoning',
      id: 'rs_1',
      encrypted_content: 'gAAAA-v2',
      summary: [{ type: 'summary_text', text: 'Plan.' }],
    });
  });

  it('retries a 429 through the same policy', async () => {
    server = await LoopbackServer.start([
      openaiError(
        429,
        { message: 'Rate limit reached.', type: 'requests', code: 'rate_limit_exceeded' },
        { 'retry-after-ms': '10' },
      ),
      chatTextStream(['ok']),
    ]);
    const parts = await streamAll(v2Chat(), modelRequest());
    expect(parts[0]).toMatchObject({ type: 'retry', attempt: 2, delayMs: 10 });
    expect(ModelRateLimitError.isInstance(parts[0]?.type === 'retry' ? parts[0].error : undefined)).toBe(
      true,
    );
    expect(textOf(parts)).toBe('ok');
  });
});

// @ai-sdk/openai 4.x declares Node 22 or later; these tests exercise it on this machine's Node too,
// since Ghost's users run 22 and 24.
describe('specification v4 (@ai-sdk/openai 4.x)', () => {
  function v4Chat() {
    const openai = createOpenAIV4({ apiKey: 'sk-test', baseURL: `${server.origin}/v1` });
    const model = openai.chat('gpt-4.1');
    expect(model.specificationVersion).toBe('v4');
    return fromAISDK(model);
  }

  it('streams text, usage and the finish', async () => {
    server = await LoopbackServer.start([
      chatTextStream(['Hello.'], 'length', {
        prompt_tokens: 50,
        completion_tokens: 10,
        total_tokens: 60,
        prompt_tokens_details: { cached_tokens: 32 },
      }),
    ]);
    const parts = await streamAll(v4Chat(), modelRequest());
    expect(parts).toEqual([
      { type: 'response-metadata', id: 'chatcmpl-ghost1', modelId: 'gpt-4.1-2025-04-14' },
      { type: 'text-delta', text: 'Hello.' },
      {
        type: 'usage',
        usage: { inputTokens: 50, outputTokens: 10, cacheReadTokens: 32, reasoningTokens: 0 },
      },
      { type: 'finish', reason: 'length', rawReason: 'length' },
    ]);
  });

  it("sends images and files in v4's tagged file data, and tool calls with their results", async () => {
    server = await LoopbackServer.start([parallelToolCalls, chatTextStream(['Done.'])]);
    const model = v4Chat();
    const first = await streamAll(model, modelRequest());
    expect(first.filter((part) => part.type === 'tool-call-stop')).toHaveLength(2);
    const messages: ModelMessage[] = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Read these.' },
          { type: 'image', data: png, mediaType: 'image/png' },
          { type: 'image', data: new URL('https://example.com/receipt.jpg'), mediaType: 'image/jpeg' },
          { type: 'file', data: 'JVBERi0=', mediaType: 'application/pdf', filename: 'policy.pdf' },
        ],
      },
      assistantMessageFrom(first),
      { role: 'tool', toolCallId: 'call_a', toolName: 'lookup', content: '{"text":"5 days"}' },
      { role: 'tool', toolCallId: 'call_b', toolName: 'lookup', content: 'No entry.', isError: true },
    ];
    await streamAll(model, modelRequest({ messages }));
    expect(server.requests[1]?.body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Read these.' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw==' } },
          { type: 'image_url', image_url: { url: 'https://example.com/receipt.jpg' } },
          {
            type: 'file',
            file: { filename: 'policy.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' },
          },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'lookup', arguments: '{"topic":"refunds"}' } },
          { id: 'call_b', type: 'function', function: { name: 'lookup', arguments: '{"topic":"shipping"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: '{"text":"5 days"}' },
      // v4's OpenAI model marks an error-text result as an error object.
      { role: 'tool', tool_call_id: 'call_b', content: '{"error":"No entry."}' },
    ]);
  });

  it('fails a stream that ended without its finish (v4 reports it interrupted) with ModelResponseError', async () => {
    server = await LoopbackServer.start([
      {
        kind: 'sse',
        events: [
          chatDelta({ role: 'assistant', content: 'Refunds take' }),
          chatUsage({ prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 }),
        ],
      },
    ]);
    const { parts, error } = await streamUntilError(v4Chat(), modelRequest());
    expect(textOf(parts)).toBe('Refunds take');
    expect(parts.some((part) => part.type === 'finish')).toBe(false);
    expect(ModelResponseError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(
      /openai\.chat's stream ended before the provider signalled completion/,
    );
  });
});
