import { ConfigurationError, createRuntime } from '@ghost/core';
import { ModelAuthenticationError } from '@ghost/core/provider';
import OpenAI from 'openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import openaiChatPlugin from './chat.js';
import openaiCompatiblePlugin from './compatible.js';
import openaiPlugin, { createOpenAI, openai } from './index.js';
import { chatText } from './test-support/chat-chunks.js';
import { collectParts, collectUntilError, textOf } from './test-support/collect-parts.js';
import { chatStream, LoopbackServer, responsesStream } from './test-support/loopback-server.js';
import { textAnswer } from './test-support/responses-events.js';

let server: LoopbackServer;
const saved = { key: process.env.OPENAI_API_KEY, baseURL: process.env.OPENAI_BASE_URL };

beforeEach(async () => {
  server = await LoopbackServer.start();
});

afterEach(async () => {
  await server.close();
  for (const [name, value] of [
    ['OPENAI_API_KEY', saved.key],
    ['OPENAI_BASE_URL', saved.baseURL],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe('the default openai provider', () => {
  it('reads OPENAI_API_KEY at the first request: without it that request fails before anything is sent', async () => {
    delete process.env.OPENAI_API_KEY;
    process.env.OPENAI_BASE_URL = server.baseURL;
    // Making models never reads the environment, so nothing throws until a request.
    const model = openai('gpt-4.1');
    const { parts, error } = await collectUntilError(model);
    expect(parts).toEqual([]);
    expect(ModelAuthenticationError.isInstance(error)).toBe(true);
    expect((error as ModelAuthenticationError).code).toBe('MODEL_API_KEY_MISSING');
    expect((error as Error).message).toBe(
      'openai needs an API key and none was found: set the OPENAI_API_KEY environment variable, or pass the apiKey option to createOpenAI({ apiKey }).',
    );
    expect(server.requests).toHaveLength(0);

    // Once the key is there, the same model works, through the registry too.
    process.env.OPENAI_API_KEY = 'sk-from-env';
    server.reply(responsesStream(textAnswer(['responses'])), chatStream(chatText(['chat'])));
    const runtime = createRuntime({ models: [openaiPlugin, openaiChatPlugin] });
    expect(textOf(await collectParts(await runtime.registry.model('openai:gpt-4.1')))).toBe('responses');
    expect(textOf(await collectParts(await runtime.registry.model('openai-chat:gpt-4.1')))).toBe('chat');
    expect(server.requests.map((request) => [request.path, request.headers.authorization])).toEqual([
      ['/v1/responses', 'Bearer sk-from-env'],
      ['/v1/chat/completions', 'Bearer sk-from-env'],
    ]);
  });

  it('a provider made with createOpenAI() and no key fails the same way, naming the variable and the option', async () => {
    delete process.env.OPENAI_API_KEY;
    const { error } = await collectUntilError(createOpenAI({ baseURL: server.baseURL }).chat('gpt-4.1'));
    expect(ModelAuthenticationError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/OPENAI_API_KEY.*apiKey/);
    expect(server.requests).toHaveLength(0);
  });
});

describe('registry plugins', () => {
  it('are default exports named openai, openai-chat and openai-compatible', () => {
    expect(openaiPlugin).toMatchObject({ kind: 'model', specificationVersion: 'model-v1', name: 'openai' });
    expect(openaiChatPlugin).toMatchObject({
      kind: 'model',
      specificationVersion: 'model-v1',
      name: 'openai-chat',
    });
    expect(openaiCompatiblePlugin).toMatchObject({
      kind: 'model',
      specificationVersion: 'model-v1',
      name: 'openai-compatible',
    });
    expect(openaiPlugin.languageModel('gpt-5')).toMatchObject({ provider: 'openai', modelId: 'gpt-5' });
    expect(openaiChatPlugin.languageModel('gpt-4.1')).toMatchObject({
      provider: 'openai-chat',
      modelId: 'gpt-4.1',
    });
  });

  it('load by their built-in names, as the registry imports them on first use', async () => {
    // From this package rather than the application's directory: the repository root does not
    // depend on @ghost/provider-openai.
    const runtime = createRuntime({ importModule: (specifier) => import(specifier) });
    expect(await runtime.registry.model('openai:gpt-5')).toMatchObject({
      provider: 'openai',
      modelId: 'gpt-5',
    });
    expect(await runtime.registry.model('openai-chat:gpt-4.1')).toMatchObject({
      provider: 'openai-chat',
      modelId: 'gpt-4.1',
    });
    expect(
      await runtime.registry.model('openai-compatible:http://127.0.0.1:11434/v1#qwen2.5-coder'),
    ).toMatchObject({
      provider: 'openai-compatible',
      modelId: 'http://127.0.0.1:11434/v1#qwen2.5-coder',
    });
    await expect(runtime.registry.model('openai-compatible:qwen2.5-coder')).rejects.toThrow(
      ConfigurationError,
    );
  });

  it("a provider's own plugins register with a runtime and serve 'openai:' model ids", async () => {
    server.reply(responsesStream(textAnswer(['mine'])));
    const mine = createOpenAI({ apiKey: 'sk-mine', baseURL: server.baseURL });
    const runtime = createRuntime({ models: [mine.plugin, mine.chatPlugin] });
    const model = await runtime.registry.model('openai:gpt-4.1');
    expect(textOf(await collectParts(model))).toBe('mine');
    expect(server.requests[0]?.headers.authorization).toBe('Bearer sk-mine');
  });
});

describe('createOpenAI options', () => {
  it('rejects unknown options and wrong types when the provider is made', () => {
    expect(() => createOpenAI({ apikey: 'x' } as never)).toThrow(/has no option 'apikey'/);
    expect(() => createOpenAI({ maxRetries: -1 })).toThrow(/maxRetries/);
    expect(() => createOpenAI({ timeoutMs: 0 })).toThrow(/timeoutMs/);
    expect(() => createOpenAI({ headers: { 'x-a': 1 } } as never)).toThrow(ConfigurationError);
  });

  it('refuses a client together with connection options, which belong on the client', () => {
    const client = new OpenAI({ apiKey: 'sk', baseURL: server.baseURL });
    expect(() => createOpenAI({ client, apiKey: 'sk-2' })).toThrow(/got a client and apiKey/);
    expect(() => createOpenAI({ client: {} as OpenAI })).toThrow(/client made with new OpenAI/);
  });

  it('refuses an empty model id', () => {
    const provider = createOpenAI({ apiKey: 'sk' });
    expect(() => provider('')).toThrow(ConfigurationError);
    expect(() => provider.chat(' ')).toThrow(/needs a model id/);
  });
});
