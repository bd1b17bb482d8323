import Anthropic from '@anthropic-ai/sdk';
import type { ModelV1 } from '@ghost/core';
import {
  defaultModelStreamLimits,
  type ModelRequest,
  ModelResponseError,
  type ModelStreamLimits,
  type ModelStreamPart,
  ModelUnavailableError,
} from '@ghost/core/provider';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAnthropic } from './anthropic-provider.js';
import { answer, blockEvents, MessagesServer, messageStart } from './test-support/messages-server.js';

let server: MessagesServer;

beforeEach(async () => {
  server = await MessagesServer.start();
});

afterEach(async () => {
  await server.close();
});

function model(settings: Parameters<typeof createAnthropic>[0] = {}): ModelV1 {
  return createAnthropic({ apiKey: 'test-key', baseURL: server.baseURL, ...settings })('claude-sonnet-4-5');
}

const request: ModelRequest = { instructions: '', messages: [{ role: 'user', content: 'Hi' }], tools: [] };

/** Reads `target` under `limits` (the defaults, changed by `changes`): its parts, and what it threw. */
async function read(
  target: ModelV1,
  changes: Partial<ModelStreamLimits> = {},
): Promise<{ parts: ModelStreamPart[]; error: unknown }> {
  const parts: ModelStreamPart[] = [];
  const limits = { ...defaultModelStreamLimits, ...changes };
  try {
    for await (const part of target.stream(request, { signal: new AbortController().signal, limits })) {
      parts.push(part);
    }
  } catch (error) {
    return { parts, error };
  }
  return { parts, error: undefined };
}

const start = messageStart('msg_1', 'claude-sonnet-4-5', { input_tokens: 5 });

describe('an Anthropic answer read under the stream limits', () => {
  it('ends an event longer than maxStreamEventBytes (16 MiB) as its bytes arrive, without waiting for its end', async () => {
    // A delta line past the bound that never ends: an SDK that buffered lines would wait forever.
    const line = `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"${'x'.repeat(17 * 1024 * 1024)}`;
    server.enqueue({
      kind: 'stream',
      events: [start, ...blockEvents(0, { type: 'text', deltas: [] }).slice(0, 1)],
      tail: line,
      chunkBytes: 65_536,
      ending: 'hold',
    });
    const closed = server.streamClosed();
    const { parts, error } = await read(model());
    expect(ModelResponseError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      code: 'MODEL_STREAM_EVENT_TOO_LARGE',
      limit: 'maxStreamEventBytes',
      provider: 'anthropic',
    });
    expect(parts).toEqual([]);
    await closed;
  });

  it('bounds a client the user made too, and the whole answer by maxAnswerBytes', async () => {
    const deltas = Array.from({ length: 3_000 }, () => 'y'.repeat(100));
    server.enqueue({ ...answer([{ type: 'text', deltas }]), ending: 'hold' });
    const client = new Anthropic({ apiKey: 'user-key', baseURL: server.baseURL });
    const { parts, error } = await read(createAnthropic({ client })('claude-sonnet-4-5'), {
      maxAnswerBytes: 128 * 1024,
    });
    expect(error).toMatchObject({ code: 'MODEL_ANSWER_TOO_LARGE', limit: 'maxAnswerBytes' });
    expect(parts.some((part) => part.type === 'text-delta')).toBe(true);
  });

  it('ends the answer at the tool_use block past maxToolCallsPerAnswer', async () => {
    const blocks = Array.from({ length: 4 }, (_, index) => ({
      type: 'tool_use' as const,
      id: `toolu_${index}`,
      name: 'lookup',
      json: ['{}'],
    }));
    server.enqueue(answer(blocks));
    const { parts, error } = await read(model(), { maxToolCallsPerAnswer: 3 });
    expect(error).toMatchObject({ code: 'MODEL_TOO_MANY_TOOL_CALLS', provider: 'anthropic' });
    expect(parts.filter((part) => part.type === 'tool-call-start')).toHaveLength(3);
  });

  // A second long: the retried answer must reach the SDK within the window, even on a busy machine.
  it('retries a request whose stream sends nothing for streamIdleTimeoutMs before its first part', async () => {
    server.enqueue(
      { kind: 'stream', events: [start], ending: 'hold' },
      answer([{ type: 'text', deltas: ['ok'] }]),
    );
    const closed = server.streamClosed();
    const { parts, error } = await read(model(), { streamIdleTimeoutMs: 1_000 });
    expect(error).toBeUndefined();
    const [retry] = parts;
    expect(retry).toMatchObject({ type: 'retry', attempt: 2 });
    const idle = retry?.type === 'retry' ? retry.error : undefined;
    expect(ModelUnavailableError.isInstance(idle)).toBe(true);
    expect(idle).toMatchObject({ code: 'MODEL_STREAM_IDLE', provider: 'anthropic' });
    expect(parts.some((part) => part.type === 'text-delta')).toBe(true);
    await closed;
    expect(server.requests).toHaveLength(2);
  });

  it('ends a stream that stalls after its first part with MODEL_STREAM_IDLE, not retried', async () => {
    server.enqueue({
      kind: 'stream',
      events: [start, ...blockEvents(0, { type: 'text', deltas: ['Hel'] }).slice(0, 2)],
      ending: 'hold',
    });
    const closed = server.streamClosed();
    const { parts, error } = await read(model(), { streamIdleTimeoutMs: 1_000 });
    expect(error).toMatchObject({ code: 'MODEL_STREAM_IDLE', limit: 'streamIdleTimeoutMs' });
    expect(parts.map((part) => part.type)).toEqual(['response-metadata', 'text-delta']);
    await closed;
    expect(server.requests).toHaveLength(1);
  });
});
