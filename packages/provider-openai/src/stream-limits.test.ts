import { defineAgent, defineTool } from '@ghost/core';
import {
  defaultModelStreamLimits,
  ModelResponseError,
  type ModelStreamLimits,
  ModelUnavailableError,
} from '@ghost/core/provider';
import OpenAI from 'openai';
import Type from 'typebox';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createOpenAI } from './openai-provider.js';
import { chatChunk, chatText } from './test-support/chat-chunks.js';
import { collectParts, collectUntilError, requestOf, textOf } from './test-support/collect-parts.js';
import { chatStream, LoopbackServer, type Reply, responsesStream } from './test-support/loopback-server.js';
import { functionCallEvents, responseCompleted, responseCreated } from './test-support/responses-events.js';

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

function limitsWith(changes: Partial<ModelStreamLimits>): ModelStreamLimits {
  return { ...defaultModelStreamLimits, ...changes };
}

/** Streams `model` with `limits`, as the agent calls it. */
function streamWith(model: ReturnType<ReturnType<typeof createOpenAI>>, limits: ModelStreamLimits) {
  const parts: string[] = [];
  const reading = (async () => {
    for await (const part of model.stream(requestOf(), { signal: new AbortController().signal, limits })) {
      parts.push(part.type);
    }
  })();
  return { parts, reading };
}

/** A Chat Completions chunk carrying tool call fragments that have an id and no index. */
function fragmentsChunk(fragments: readonly Record<string, unknown>[]) {
  return chatChunk({ tool_calls: fragments });
}

/** Headers of an event stream, then `body` written in pieces of 64 KiB; the connection stays open. */
function rawStream(body: string): Reply {
  return (response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let offset = 0; offset < body.length; offset += 65_536) {
      response.write(body.slice(offset, offset + 65_536));
    }
  };
}

describe('tool calls in a Chat Completions stream', () => {
  it('matches 40,000 calls that carry an id and no index to their own calls, in time linear in the stream', async () => {
    // Each call starts by id and sends the rest of its arguments in a later fragment with only its id.
    const count = 40_000;
    const chunks: Record<string, unknown>[] = [chatChunk({ role: 'assistant', content: null })];
    const starts = Array.from({ length: count }, (_, call) => ({
      id: `call_${call}`,
      type: 'function',
      function: { name: 'lookup', arguments: '{"n":' },
    }));
    const ends = Array.from({ length: count }, (_, call) => ({
      id: `call_${call}`,
      function: { arguments: `${call}}` },
    }));
    for (let offset = 0; offset < count; offset += 1000) {
      chunks.push(fragmentsChunk(starts.slice(offset, offset + 1000)));
    }
    for (let offset = 0; offset < count; offset += 1000) {
      chunks.push(fragmentsChunk(ends.slice(offset, offset + 1000)));
    }
    chunks.push(chatChunk({}, 'tool_calls'));
    server.reply(chatStream(chunks));
    const model = provider().chat('gpt-4.1');
    const request = requestOf();
    const parts = [];
    for await (const part of model.stream(request, {
      signal: new AbortController().signal,
      limits: limitsWith({ maxToolCallsPerAnswer: count }),
    })) {
      parts.push(part);
    }
    const calls = new Map<number, { id: string; arguments: string }>();
    for (const part of parts) {
      if (part.type === 'tool-call-start') calls.set(part.index, { id: part.id, arguments: '' });
      const call = part.type === 'tool-call-delta' ? calls.get(part.index) : undefined;
      if (call !== undefined && part.type === 'tool-call-delta') call.arguments += part.argumentsDelta;
    }
    expect(calls.size).toBe(count);
    for (const index of [0, 1, 12_345, count - 1]) {
      expect(calls.get(index)).toEqual({ id: `call_${index}`, arguments: `{"n":${index}}` });
    }
    expect(parts.at(-1)).toMatchObject({ type: 'finish', reason: 'tool-calls' });
  });

  it('ends the answer at the call past maxToolCallsPerAnswer (default 1,000) and closes the connection', async () => {
    const fragments = Array.from({ length: 1_001 }, (_, call) => ({
      id: `call_${call}`,
      type: 'function',
      function: { name: 'lookup', arguments: '{}' },
    }));
    server.reply(chatStream([fragmentsChunk(fragments)], { hang: true }));
    const { error } = await collectUntilError(provider().chat('gpt-4.1'));
    expect(ModelResponseError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      code: 'MODEL_TOO_MANY_TOOL_CALLS',
      limit: 'maxToolCallsPerAnswer',
      provider: 'openai-chat',
    });
    expect((error as Error).message).toMatch(/calls more than 1,000 tools in one answer/);
    await server.requests[0]?.closed;
    expect(server.requests[0]?.isReplyFinished()).toBe(false);
  });

  it('ends the answer when arguments waiting for their call name pass maxToolCallBytes', async () => {
    // Fragments of one call that never names its function: their arguments pile up unsent.
    const pieces = Array.from({ length: 20 }, () =>
      fragmentsChunk([{ index: 0, function: { arguments: 'x'.repeat(100) } }]),
    );
    server.reply(chatStream(pieces, { hang: true }));
    const { parts, reading } = streamWith(provider().chat('gpt-4.1'), limitsWith({ maxToolCallBytes: 1000 }));
    const error = await reading.catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'MODEL_TOOL_CALL_TOO_LARGE', limit: 'maxToolCallBytes' });
    expect(parts).toEqual([]);
  });
});

describe('the bytes of a streamed answer', () => {
  it('ends an event longer than maxStreamEventBytes (16 MiB) as its bytes arrive, without waiting for its end', async () => {
    // A line past the bound that never ends: an SDK that buffered lines would wait forever.
    const line = `data: {"id":"chatcmpl-1","choices":[{"index":0,"delta":{"content":"${'x'.repeat(17 * 1024 * 1024)}`;
    server.reply(rawStream(line));
    const { error } = await collectUntilError(provider().chat('gpt-4.1'));
    expect(ModelResponseError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      code: 'MODEL_STREAM_EVENT_TOO_LARGE',
      limit: 'maxStreamEventBytes',
      provider: 'openai-chat',
    });
    expect((error as Error).message).toMatch(/longer than 16 MiB \(16,777,216 bytes\)/);
    await server.requests[0]?.closed;
  });

  it('reads an event just under the bound whole (the SDK gets it in one piece)', async () => {
    const content = 'y'.repeat(15 * 1024 * 1024);
    server.reply(chatStream(chatText([content])));
    const parts = await collectParts(provider().chat('gpt-4.1'));
    expect(textOf(parts)).toBe(content);
  });

  it('ends an answer whose body passes maxAnswerBytes, with a client the user made too', async () => {
    const deltas = Array.from({ length: 2_000 }, () => chatChunk({ content: 'z'.repeat(64) }));
    server.reply(chatStream(deltas, { hang: true }));
    const client = new OpenAI({ apiKey: 'sk-user', baseURL: server.baseURL });
    const { parts, reading } = streamWith(
      createOpenAI({ client }).chat('gpt-4.1'),
      limitsWith({ maxAnswerBytes: 64 * 1024 }),
    );
    const error = await reading.catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'MODEL_ANSWER_TOO_LARGE', limit: 'maxAnswerBytes' });
    expect(parts.length).toBeGreaterThan(0);
    await server.requests[0]?.closed;
    expect(server.requests[0]?.isReplyFinished()).toBe(false);
  });

  it('bounds the Responses API the same way: an event past maxStreamEventBytes', async () => {
    const created = JSON.stringify(responseCreated());
    const huge = `event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"${'w'.repeat(300_000)}`;
    server.reply(rawStream(`event: response.created\ndata: ${created}\n\n${huge}`));
    const { reading } = streamWith(provider()('gpt-5'), limitsWith({ maxStreamEventBytes: 256 * 1024 }));
    const error = await reading.catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'MODEL_STREAM_EVENT_TOO_LARGE', provider: 'openai' });
  });

  it('ends a Responses answer at the function call past maxToolCallsPerAnswer', async () => {
    const calls = Array.from({ length: 4 }, (_, call) =>
      functionCallEvents(call, `fc_${call}`, `call_${call}`, 'lookup', ['{}']),
    ).flat();
    server.reply(responsesStream([responseCreated(), ...calls, responseCompleted()]));
    const { parts, reading } = streamWith(provider()('gpt-5'), limitsWith({ maxToolCallsPerAnswer: 3 }));
    const error = await reading.catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'MODEL_TOO_MANY_TOOL_CALLS', limit: 'maxToolCallsPerAnswer' });
    expect(parts.filter((type) => type === 'tool-call-start')).toHaveLength(3);
  });
});

describe('a stream that stalls', () => {
  it('retries a request whose stream sends nothing for streamIdleTimeoutMs before its first part', async () => {
    server.reply(rawStream(''), chatStream(chatText(['ok'])));
    const parts = [];
    for await (const part of provider()
      .chat('gpt-4.1')
      .stream(requestOf(), {
        signal: new AbortController().signal,
        limits: limitsWith({ streamIdleTimeoutMs: 1_000 }),
      })) {
      parts.push(part);
    }
    const [retry] = parts;
    expect(retry).toMatchObject({ type: 'retry', attempt: 2 });
    const idle = retry?.type === 'retry' ? retry.error : undefined;
    expect(ModelUnavailableError.isInstance(idle)).toBe(true);
    expect(idle).toMatchObject({
      code: 'MODEL_STREAM_IDLE',
      limit: 'streamIdleTimeoutMs',
      provider: 'openai-chat',
    });
    expect(textOf(parts)).toBe('ok');
    // Ghost closed the stalled connection itself.
    await server.requests[0]?.closed;
    expect(server.requests).toHaveLength(2);
  });

  it('ends a stream that stalls after its first part with MODEL_STREAM_IDLE, not retried', async () => {
    server.reply(chatStream([chatChunk({ role: 'assistant', content: 'Hel' })], { hang: true }));
    const { parts, reading } = streamWith(
      provider().chat('gpt-4.1'),
      limitsWith({ streamIdleTimeoutMs: 1_000 }),
    );
    const error = await reading.catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'MODEL_STREAM_IDLE' });
    expect(parts).toEqual(['response-metadata', 'text-delta']);
    await server.requests[0]?.closed;
    expect(server.requests).toHaveLength(1);
  });
});

describe('an agent reading a hostile stream', () => {
  const echo = defineTool({
    name: 'echo',
    description: 'Returns its input.',
    input: Type.Object({ value: Type.Unknown() }),
    execute: ({ value }) => ({ value }),
  });

  it('answers arguments nested 20,000 deep with a tool error, and the run goes on', async () => {
    const deep = `{"value":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
    server.reply(
      chatStream([
        chatChunk({
          tool_calls: [
            { index: 0, id: 'call_deep', type: 'function', function: { name: 'echo', arguments: deep } },
          ],
        }),
        chatChunk({}, 'tool_calls'),
      ]),
      chatStream(chatText(['Sorry, flatter next time.'])),
    );
    const agent = defineAgent({ name: 'a', model: provider().chat('gpt-4.1'), tools: [echo] });
    const run = await agent.ask('go');
    expect(run.outcome).toBe('completed');
    expect(run.response).toBe('Sorry, flatter next time.');
    const toolMessage = server.requests[1]?.body.messages.find(
      (message: { role: string }) => message.role === 'tool',
    );
    expect(toolMessage).toEqual({
      role: 'tool',
      tool_call_id: 'call_deep',
      content:
        'Invalid tool input: /: arguments nest deeper than 256 levels of arrays and objects; send flatter arguments',
    });
  });

  it('ends ask() with MODEL_STREAM_IDLE when the stream stalls mid-answer, by the agent limits', async () => {
    server.reply(chatStream([chatChunk({ role: 'assistant', content: 'Hel' })], { hang: true }));
    const agent = defineAgent({
      name: 'a',
      model: provider().chat('gpt-4.1'),
      limits: { streamIdleTimeoutMs: 1_000 },
    });
    const run = await agent.ask('go');
    expect(run.outcome).toBe('failed');
    expect(run.error).toMatchObject({ code: 'MODEL_STREAM_IDLE', limit: 'streamIdleTimeoutMs' });
    await server.requests[0]?.closed;
  });
});
