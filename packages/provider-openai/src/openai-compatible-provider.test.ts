import { ConfigurationError, createRuntime } from '@ghost/core';
import { ModelAuthenticationError, ModelResponseError } from '@ghost/core/provider';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import openaiCompatible from './compatible.js';
import { createOpenAICompatible } from './openai-compatible-provider.js';
import { chatChunk, chatText, toolCallFragment } from './test-support/chat-chunks.js';
import { collectParts, collectUntilError, requestOf, textOf } from './test-support/collect-parts.js';
import { chatStream, errorReply, LoopbackServer } from './test-support/loopback-server.js';

let server: LoopbackServer;
const savedKey = process.env.OPENAI_API_KEY;

beforeEach(async () => {
  server = await LoopbackServer.start();
  // An OpenAI key in the environment must never reach another server.
  process.env.OPENAI_API_KEY = 'sk-openai-secret';
});

afterEach(async () => {
  await server.close();
  if (savedKey === undefined) delete process.env.OPENAI_API_KEY;
  else process.env.OPENAI_API_KEY = savedKey;
});

describe('a server that speaks Chat Completions', () => {
  it('streams reasoning_content as reasoning, needs no key, and leaves usage unknown when none is sent', async () => {
    server.reply(
      chatStream([
        chatChunk({ role: 'assistant', reasoning_content: 'The user ' }, null, { model: 'qwen3' }),
        chatChunk({ reasoning_content: 'greets me.' }, null, { model: 'qwen3' }),
        chatChunk({ content: 'Hello' }, null, { model: 'qwen3' }),
        chatChunk({ content: '!' }, null, { model: 'qwen3' }),
        chatChunk({}, 'stop', { model: 'qwen3' }),
      ]),
    );
    const local = createOpenAICompatible({ name: 'local', baseURL: server.baseURL });
    const model = local('qwen3');
    expect(model).toMatchObject({ provider: 'local', modelId: 'qwen3' });
    const parts = await collectParts(model);
    expect(parts).toEqual([
      { type: 'response-metadata', id: 'chatcmpl-0123', modelId: 'qwen3' },
      { type: 'reasoning-delta', text: 'The user ' },
      { type: 'reasoning-delta', text: 'greets me.' },
      { type: 'reasoning-end', reasoning: { text: 'The user greets me.', provider: 'local' } },
      { type: 'text-delta', text: 'Hello' },
      { type: 'text-delta', text: '!' },
      { type: 'finish', reason: 'stop', rawReason: 'stop' },
    ]);
    const [request] = server.requests;
    expect(request?.headers.authorization).toBeUndefined();
    expect(request?.headers['openai-organization']).toBeUndefined();
    expect(JSON.stringify(request?.headers)).not.toContain('sk-openai-secret');
    expect(request?.body).toMatchObject({
      model: 'qwen3',
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('reads `reasoning` deltas (OpenRouter, Ollama, newer vLLM)', async () => {
    server.reply(
      chatStream([chatChunk({ reasoning: 'hmm' }), chatChunk({ content: 'ok' }), chatChunk({}, 'stop')]),
    );
    const parts = await collectParts(
      createOpenAICompatible({ name: 'router', baseURL: server.baseURL })('any'),
    );
    expect(parts.filter((part) => part.type === 'reasoning-delta')).toEqual([
      { type: 'reasoning-delta', text: 'hmm' },
    ]);
    expect(textOf(parts)).toBe('ok');
  });

  it('gives tool calls without ids generated ids that stay the same from start to finish', async () => {
    server.reply(
      chatStream([
        chatChunk({ tool_calls: [toolCallFragment(0, { name: 'lookup', arguments: '{"q":' })] }),
        chatChunk({ tool_calls: [toolCallFragment(1, { name: 'lookup', arguments: '{"q":"b"}' })] }),
        chatChunk({ tool_calls: [toolCallFragment(0, { arguments: '"a"}' })] }),
        // Ollama-style: `stop` even though the model called tools.
        chatChunk({}, 'stop'),
      ]),
    );
    const parts = await collectParts(
      createOpenAICompatible({ name: 'ollama', baseURL: server.baseURL })('qwen2.5-coder'),
    );
    const starts = parts.filter((part) => part.type === 'tool-call-start');
    expect(starts).toHaveLength(2);
    const [first, second] = starts;
    expect(first).toMatchObject({
      index: 0,
      name: 'lookup',
      id: expect.stringMatching(/^call_[0-9a-f]{32}$/),
    });
    expect(second).toMatchObject({
      index: 1,
      name: 'lookup',
      id: expect.stringMatching(/^call_[0-9a-f]{32}$/),
    });
    expect(
      first?.type === 'tool-call-start' && second?.type === 'tool-call-start' && first.id !== second.id,
    ).toBe(true);
    expect(parts.filter((part) => part.type === 'tool-call-delta')).toEqual([
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"q":' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '{"q":"b"}' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '"a"}' },
    ]);
    expect(parts.at(-1)).toEqual({ type: 'finish', reason: 'tool-calls', rawReason: 'stop' });
  });

  it('takes tool calls that come without an index, and arguments given as an object', async () => {
    server.reply(
      chatStream([
        chatChunk({ tool_calls: [{ id: 'a', function: { name: 'one', arguments: { x: 1 } } }] }),
        chatChunk({ tool_calls: [{ id: 'b', function: { name: 'two', arguments: '{}' } }] }),
        chatChunk({}, 'tool_calls'),
      ]),
    );
    const parts = await collectParts(createOpenAICompatible({ name: 'srv', baseURL: server.baseURL })('m'));
    expect(parts.filter((part) => part.type.startsWith('tool-call'))).toEqual([
      { type: 'tool-call-start', index: 0, id: 'a', name: 'one' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"x":1}' },
      { type: 'tool-call-start', index: 1, id: 'b', name: 'two' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '{}' },
      { type: 'tool-call-stop', index: 0 },
      { type: 'tool-call-stop', index: 1 },
    ]);
  });

  it('a tool call that never gets a name is a ModelResponseError', async () => {
    server.reply(
      chatStream([
        chatChunk({ tool_calls: [toolCallFragment(0, { arguments: '{}' })] }),
        chatChunk({}, 'tool_calls'),
      ]),
    );
    const { error } = await collectUntilError(
      createOpenAICompatible({ name: 'srv', baseURL: server.baseURL })('m'),
    );
    expect(ModelResponseError.isInstance(error)).toBe(true);
  });

  it('tolerates a server that sends no id, no model and no [DONE]', async () => {
    server.reply(
      chatStream(
        [
          { choices: [{ index: 0, delta: { content: 'plain' } }] },
          { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
        ],
        { done: false },
      ),
    );
    const parts = await collectParts(createOpenAICompatible({ name: 'srv', baseURL: server.baseURL })('m'));
    expect(parts).toEqual([
      { type: 'text-delta', text: 'plain' },
      { type: 'finish', reason: 'stop', rawReason: 'stop' },
    ]);
  });

  it('sends max_tokens, every setting, and providerOptions under its own name', async () => {
    server.reply(chatStream(chatText(['ok'])));
    await collectParts(
      createOpenAICompatible({ name: 'vllm', baseURL: server.baseURL })('Qwen/Qwen3-8B'),
      requestOf({
        settings: { maxOutputTokens: 64, temperature: 0.1, seed: 3 },
        providerOptions: {
          vllm: { top_k: 20, chat_template_kwargs: { enable_thinking: false } },
          openai: { store: true },
        },
      }),
    );
    const { body } = server.requests[0] ?? {};
    expect(body).toMatchObject({
      model: 'Qwen/Qwen3-8B',
      max_tokens: 64,
      temperature: 0.1,
      seed: 3,
      top_k: 20,
      chat_template_kwargs: { enable_thinking: false },
    });
    expect(body.max_completion_tokens).toBeUndefined();
    expect(body.store).toBeUndefined();
  });

  it('sends a key when given one, and names the option when it is refused', async () => {
    server.reply(errorReply(401, { message: 'No auth credentials found' }));
    const { error } = await collectUntilError(
      createOpenAICompatible({
        name: 'openrouter',
        baseURL: server.baseURL,
        apiKey: 'sk-or-1',
        headers: { 'X-Title': 'Ghost' },
      })('openai/gpt-5'),
    );
    expect(server.requests[0]?.headers).toMatchObject({
      authorization: 'Bearer sk-or-1',
      'x-title': 'Ghost',
    });
    expect(ModelAuthenticationError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain(
      "the apiKey option of createOpenAICompatible({ name: 'openrouter' })",
    );
  });

  it('rejects a bad name, a missing baseURL and unknown options', () => {
    expect(() => createOpenAICompatible({ name: 'my server', baseURL: 'http://127.0.0.1:1/v1' })).toThrow(
      ConfigurationError,
    );
    expect(() => createOpenAICompatible({ name: 'ollama' })).toThrow(/needs the server's baseURL/);
    expect(() =>
      createOpenAICompatible({ name: 'ollama', baseURL: 'http://127.0.0.1:1/v1', model: 'x' } as never),
    ).toThrow(/has no option 'model'/);
  });

  it('registers as a plugin with its own name', async () => {
    server.reply(chatStream(chatText(['from plugin'])));
    const lmstudio = createOpenAICompatible({ name: 'lmstudio', baseURL: server.baseURL });
    const runtime = createRuntime({ models: [lmstudio.plugin] });
    const model = await runtime.registry.model('lmstudio:qwen2.5-7b-instruct');
    expect(model).toMatchObject({ provider: 'lmstudio', modelId: 'qwen2.5-7b-instruct' });
    expect(textOf(await collectParts(model))).toBe('from plugin');
  });
});

describe("the 'openai-compatible' registry plugin", () => {
  it('takes <baseURL>#<model>, sending the model name to that server', async () => {
    server.reply(chatStream(chatText(['local answer'])));
    const runtime = createRuntime({ models: [openaiCompatible] });
    const model = await runtime.registry.model(`openai-compatible:${server.baseURL}#qwen2.5-coder`);
    expect(model).toMatchObject({
      provider: 'openai-compatible',
      modelId: `${server.baseURL}#qwen2.5-coder`,
    });
    expect(textOf(await collectParts(model))).toBe('local answer');
    expect(server.requests[0]?.path).toBe('/v1/chat/completions');
    expect(server.requests[0]?.body.model).toBe('qwen2.5-coder');
    expect(server.requests[0]?.headers.authorization).toBeUndefined();
  });

  it.each([
    'qwen2.5-coder',
    'http://127.0.0.1:11434/v1',
    'http://127.0.0.1:11434/v1#',
    'ftp://host/v1#m',
    '#m',
  ])('refuses the model id %j with a ConfigurationError showing the form', (modelId) => {
    expect(() => openaiCompatible.languageModel(modelId)).toThrow(ConfigurationError);
    expect(() => openaiCompatible.languageModel(modelId)).toThrow(
      /'openai-compatible:http:\/\/127\.0\.0\.1:11434\/v1#qwen2\.5-coder'/,
    );
  });
});
