import type { ModelStreamPart } from '@ghost/core/provider';
import {
  defaultModelStreamLimits,
  ModelContextOverflowError,
  ModelRateLimitError,
  ModelResponseError,
  ModelUnavailableError,
} from '@ghost/core/provider';
import { describe, expect, it } from 'vitest';
import { translateAISDKStream } from './ai-sdk-stream-translation.js';

// The translation on its own, fed streams of AI SDK parts shaped as the specifications define
// them: the cases no installed provider produces on demand (a tool call with no input parts
// before it, as @ai-sdk/google sends; text-encoded input; provider-executed tools; blocks left
// open), and the guarantees around them.

const context = {
  provider: 'example.chat',
  credentialsHint: 'EXAMPLE_API_KEY',
  signal: new AbortController().signal,
  limits: defaultModelStreamLimits,
};
const v3Finish = {
  type: 'finish',
  finishReason: { unified: 'stop', raw: 'STOP' },
  usage: {
    inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: undefined, text: undefined, reasoning: undefined },
  },
};

function partsStream(parts: readonly unknown[], onCancel?: () => void): ReadableStream<unknown> {
  return new ReadableStream<unknown>({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      // A stream that is watched for cancellation stays open, as a live HTTP response does.
      if (onCancel === undefined) controller.close();
    },
    ...(onCancel !== undefined ? { cancel: onCancel } : {}),
  });
}

async function translate(parts: readonly unknown[], within = context): Promise<ModelStreamPart[]> {
  const out: ModelStreamPart[] = [];
  for await (const part of translateAISDKStream(partsStream(parts), within)) out.push(part);
  return out;
}

async function translationError(parts: readonly unknown[]): Promise<unknown> {
  return translate(parts).then(
    (out) => new Error(`no error; parts: ${JSON.stringify(out)}`),
    (error: unknown) => error,
  );
}

describe('tool calls', () => {
  it('ends the answer at the tool call past maxToolCallsPerAnswer, counting those the provider runs', async () => {
    const within = { ...context, limits: { ...defaultModelStreamLimits, maxToolCallsPerAnswer: 3 } };
    const error = await translate(
      [
        { type: 'stream-start', warnings: [] },
        { type: 'tool-input-start', id: 'ws_1', toolName: 'web_search', providerExecuted: true },
        { type: 'tool-input-start', id: 'ws_1', toolName: 'web_search', providerExecuted: true },
        { type: 'tool-input-start', id: 'fc_1', toolName: 'lookup' },
        { type: 'tool-call', toolCallId: 'fc_2', toolName: 'lookup', input: '{}' },
        { type: 'tool-input-start', id: 'fc_3', toolName: 'lookup' },
        v3Finish,
      ],
      within,
    ).then(
      (out) => new Error(`no error; parts: ${JSON.stringify(out)}`),
      (caught: unknown) => caught,
    );
    expect(ModelResponseError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      code: 'MODEL_TOO_MANY_TOOL_CALLS',
      limit: 'maxToolCallsPerAnswer',
      provider: 'example.chat',
    });
  });

  it('gives a tool call with no input parts before it a start, one delta and a stop', async () => {
    const out = await translate([
      { type: 'stream-start', warnings: [] },
      {
        type: 'tool-call',
        toolCallId: 'fc_9',
        toolName: 'lookup',
        input: '{"topic":"refunds"}',
        providerMetadata: { google: { thoughtSignature: 'sig' } },
      },
      { ...v3Finish, finishReason: { unified: 'tool-calls', raw: 'STOP' } },
    ]);
    expect(out).toEqual([
      { type: 'tool-call-start', index: 0, id: 'fc_9', name: 'lookup' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"topic":"refunds"}' },
      { type: 'tool-call-stop', index: 0, providerMetadata: { google: { thoughtSignature: 'sig' } } },
      { type: 'finish', reason: 'tool-calls', rawReason: 'STOP' },
    ]);
  });

  it('sends only the final JSON input of a text-encoded tool input', async () => {
    const out = await translate([
      { type: 'tool-input-start', id: 'c1', toolName: 'shell', inputEncoding: 'text' },
      { type: 'tool-input-delta', id: 'c1', delta: 'ls -la' },
      { type: 'tool-input-end', id: 'c1' },
      { type: 'tool-call', toolCallId: 'c1', toolName: 'shell', input: '"ls -la"' },
      v3Finish,
    ]);
    expect(out.filter((part) => part.type.startsWith('tool-call'))).toEqual([
      { type: 'tool-call-start', index: 0, id: 'c1', name: 'shell' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '"ls -la"' },
      { type: 'tool-call-stop', index: 0 },
    ]);
  });

  it('completes the arguments when the final input extends what streamed, and keeps deltas that disagree', async () => {
    const out = await translate([
      { type: 'tool-input-start', id: 'a', toolName: 'noop' },
      { type: 'tool-input-end', id: 'a' },
      { type: 'tool-call', toolCallId: 'a', toolName: 'noop', input: '{}' },
      { type: 'tool-input-start', id: 'b', toolName: 'lookup' },
      { type: 'tool-input-delta', id: 'b', delta: '{"topic": "x"}' },
      { type: 'tool-call', toolCallId: 'b', toolName: 'lookup', input: '{"topic":"x"}' },
      v3Finish,
    ]);
    expect(out.filter((part) => part.type.startsWith('tool-call'))).toEqual([
      { type: 'tool-call-start', index: 0, id: 'a', name: 'noop' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{}' },
      { type: 'tool-call-stop', index: 0 },
      { type: 'tool-call-start', index: 1, id: 'b', name: 'lookup' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '{"topic": "x"}' },
      { type: 'tool-call-stop', index: 1 },
    ]);
  });

  it('leaves out tools the provider runs itself, and their results', async () => {
    const out = await translate([
      { type: 'tool-input-start', id: 'ws_1', toolName: 'web_search', providerExecuted: true },
      { type: 'tool-input-delta', id: 'ws_1', delta: '{}' },
      { type: 'tool-call', toolCallId: 'ws_1', toolName: 'web_search', input: '{}', providerExecuted: true },
      { type: 'tool-result', toolCallId: 'ws_1', toolName: 'web_search', result: { hits: 3 } },
      { type: 'source', sourceType: 'url', id: 's1', url: 'https://example.com' },
      { type: 'text-delta', id: 't', delta: 'Found it.' },
      v3Finish,
    ]);
    expect(out).toEqual([
      { type: 'text-delta', text: 'Found it.' },
      { type: 'finish', reason: 'stop', rawReason: 'STOP' },
    ]);
  });

  it('stops a call the provider left open before the finish', async () => {
    const out = await translate([
      { type: 'tool-input-start', id: 'c', toolName: 'lookup' },
      { type: 'tool-input-delta', id: 'c', delta: '{"a":1}' },
      v3Finish,
    ]);
    expect(out.map((part) => part.type)).toEqual([
      'tool-call-start',
      'tool-call-delta',
      'tool-call-stop',
      'finish',
    ]);
  });
});

describe('reasoning', () => {
  it('merges the provider metadata of a block’s start, deltas and end, per provider', async () => {
    const out = await translate([
      {
        type: 'reasoning-start',
        id: 'r',
        providerMetadata: { openai: { itemId: 'rs_1', reasoningEncryptedContent: null } },
      },
      { type: 'reasoning-delta', id: 'r', delta: 'Think.' },
      { type: 'reasoning-delta', id: 'r', delta: '', providerMetadata: { anthropic: { signature: 'sig' } } },
      {
        type: 'reasoning-end',
        id: 'r',
        providerMetadata: { openai: { reasoningEncryptedContent: 'enc', unset: undefined } },
      },
      v3Finish,
    ]);
    expect(out[1]).toEqual({
      type: 'reasoning-end',
      reasoning: {
        text: 'Think.',
        provider: 'example.chat',
        providerMetadata: {
          openai: { itemId: 'rs_1', reasoningEncryptedContent: 'enc' },
          anthropic: { signature: 'sig' },
        },
      },
    });
  });

  it('ends a block the provider left open before the finish', async () => {
    const out = await translate([
      { type: 'reasoning-start', id: 'r' },
      { type: 'reasoning-delta', id: 'r', delta: 'Hm' },
      v3Finish,
    ]);
    expect(out).toEqual([
      { type: 'reasoning-delta', text: 'Hm' },
      { type: 'reasoning-end', reasoning: { text: 'Hm', provider: 'example.chat' } },
      { type: 'finish', reason: 'stop', rawReason: 'STOP' },
    ]);
  });
});

describe('usage and finish', () => {
  it('adds up a v3 input total the provider left out from its parts', async () => {
    const out = await translate([
      {
        ...v3Finish,
        usage: {
          inputTokens: { total: undefined, noCache: 10, cacheRead: 90, cacheWrite: undefined },
          outputTokens: { total: undefined, text: 5, reasoning: 7 },
        },
      },
    ]);
    expect(out[0]).toEqual({
      type: 'usage',
      usage: { inputTokens: 100, outputTokens: 12, cacheReadTokens: 90, reasoningTokens: 7 },
    });
  });

  it('reports no usage part when no count is known', async () => {
    expect((await translate([v3Finish])).map((part) => part.type)).toEqual(['finish']);
  });

  it('reads v2 usage and finish reasons', async () => {
    const out = await translate([
      {
        type: 'finish',
        finishReason: 'content-filter',
        usage: { inputTokens: 3, outputTokens: undefined, totalTokens: 3, cachedInputTokens: undefined },
      },
    ]);
    expect(out).toEqual([
      { type: 'usage', usage: { inputTokens: 3, totalTokens: 3 } },
      { type: 'finish', reason: 'content-filter', rawReason: 'content-filter' },
    ]);
  });

  it('ignores parts it does not know, such as later versions add', async () => {
    const out = await translate([
      { type: 'ping' },
      { type: 'custom', kind: 'x.y' },
      'not an object',
      null,
      v3Finish,
    ]);
    expect(out.map((part) => part.type)).toEqual(['finish']);
  });

  it('fails a stream that ends without a finish part', async () => {
    const error = await translationError([{ type: 'text-delta', id: 't', delta: 'Half' }]);
    expect(ModelResponseError.isInstance(error)).toBe(true);
    expect((error as Error).message).toBe(
      "example.chat's stream ended without a finish part; the answer is incomplete.",
    );
  });

  it('fails an interrupted (v4) finish', async () => {
    const error = await translationError([
      { ...v3Finish, finishReason: { unified: 'interrupted', raw: undefined } },
    ]);
    expect(ModelResponseError.isInstance(error)).toBe(true);
  });
});

describe('error parts', () => {
  it.each([
    [
      {
        type: 'rate_limit_error',
        message: 'Number of request tokens has exceeded your per-minute rate limit',
      },
      ModelRateLimitError,
    ],
    [
      { code: 'context_length_exceeded', message: 'Your input exceeds the context window of this model.' },
      ModelContextOverflowError,
    ],
    [{ type: 'overloaded_error', message: 'Overloaded' }, ModelUnavailableError],
    [{ message: 'Something unexpected.' }, ModelResponseError],
  ])('maps the provider error event %o', async (payload, errorClass) => {
    const error = await translationError([
      { type: 'text-delta', id: 't', delta: 'x' },
      { type: 'error', error: payload },
      v3Finish,
    ]);
    expect(errorClass.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain(
      `example.chat reported an error in its stream: ${payload.message}`,
    );
  });
});

describe('the stream', () => {
  it('is cancelled when the consumer stops early, which closes the response', async () => {
    let cancelled = false;
    const stream = partsStream([{ type: 'text-delta', id: 't', delta: 'a' }], () => {
      cancelled = true;
    });
    for await (const part of translateAISDKStream(stream, context)) {
      expect(part).toEqual({ type: 'text-delta', text: 'a' });
      break;
    }
    expect(cancelled).toBe(true);
  });
});
