import { ConfigurationError, createRuntime, defineAgent, defineTool, type ModelV1 } from '@ghost/core';
import { ModelAuthenticationError, type ModelStreamPart } from '@ghost/core/provider';
import Type from 'typebox';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import anthropicPlugin, { anthropic, createAnthropic } from './index.js';
import { answer, MessagesServer } from './test-support/messages-server.js';

let server: MessagesServer;
const savedEnvironment = { ...process.env };

beforeEach(async () => {
  server = await MessagesServer.start();
  delete process.env.ANTHROPIC_API_KEY;
  delete process.env.ANTHROPIC_BASE_URL;
});

afterEach(async () => {
  process.env = { ...savedEnvironment };
  await server.close();
});

const hello = { instructions: '', messages: [{ role: 'user' as const, content: 'Hi' }], tools: [] };

async function collect(model: ModelV1): Promise<ModelStreamPart[]> {
  const parts: ModelStreamPart[] = [];
  for await (const part of model.stream(hello, { signal: new AbortController().signal })) parts.push(part);
  return parts;
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}

describe('API key', () => {
  it('fails before any request with ModelAuthenticationError naming ANTHROPIC_API_KEY and apiKey', async () => {
    const error = await rejection(collect(createAnthropic({ baseURL: server.baseURL })('claude-sonnet-4-5')));
    expect(ModelAuthenticationError.isInstance(error)).toBe(true);
    expect(error.message).toContain('ANTHROPIC_API_KEY');
    expect(error.message).toContain('apiKey');
    expect(server.requests).toHaveLength(0);
  });

  it('is read by the default provider at its first request, with ANTHROPIC_BASE_URL', async () => {
    const model = anthropic('claude-sonnet-4-5');
    const missing = await rejection(collect(model));
    expect(ModelAuthenticationError.isInstance(missing)).toBe(true);
    expect(server.requests).toHaveLength(0);

    // Set after the provider and the model exist: nothing was read at import or creation.
    process.env.ANTHROPIC_API_KEY = 'key-from-env';
    process.env.ANTHROPIC_BASE_URL = server.baseURL;
    server.enqueue(answer([{ type: 'text', deltas: ['hello'] }]));
    const parts = await collect(model);
    expect(parts.filter((part) => part.type === 'text-delta')).toEqual([
      { type: 'text-delta', text: 'hello' },
    ]);
    expect(server.requests[0]?.headers.authorization).toBe('Bearer key-from-env');
  });

  it('prefers the apiKey option to the environment', async () => {
    process.env.ANTHROPIC_API_KEY = 'key-from-env';
    server.enqueue(answer([{ type: 'text', deltas: ['hi'] }]));
    await collect(
      createAnthropic({ apiKey: 'key-from-option', baseURL: server.baseURL })('claude-haiku-4-5'),
    );
    expect(server.requests[0]?.headers.authorization).toBe('Bearer key-from-option');
  });
});

describe('createAnthropic', () => {
  it('makes models on the Messages API', () => {
    const provider = createAnthropic({ apiKey: 'k' });
    const model = provider('claude-opus-4-5');
    expect(model).toMatchObject({
      specificationVersion: 'model-v1',
      provider: 'anthropic',
      modelId: 'claude-opus-4-5',
    });
    expect(provider.languageModel('claude-haiku-4-5').modelId).toBe('claude-haiku-4-5');
  });

  it('rejects settings that cannot work, when it is called', async () => {
    const { default: Anthropic } = await import('@anthropic-ai/sdk');
    const client = new Anthropic({ apiKey: 'k' });
    const cases: [unknown, RegExp][] = [
      [{ apiKee: 'k' }, /no option 'apiKee'/],
      [{ client, apiKey: 'k' }, /both client and apiKey/],
      [{ client: {} }, /client made with new Anthropic/],
      [{ maxRetries: -1 }, /maxRetries = -1/],
      [{ timeoutMs: 0 }, /timeoutMs = 0/],
      [{ cache: 'yes' }, /cache: true or false/],
    ];
    for (const [settings, message] of cases) {
      const error = (() => {
        try {
          createAnthropic(settings as never);
        } catch (caught) {
          return caught as Error;
        }
        throw new Error(`accepted ${JSON.stringify(settings)}`);
      })();
      expect(ConfigurationError.isInstance(error)).toBe(true);
      expect(error.message).toMatch(message);
    }
    expect(() => createAnthropic({ apiKey: 'k' })('')).toThrow(/needs a model id/);
  });
});

describe('the registry plugin', () => {
  it("is the package's default export, so 'anthropic:<model>' resolves through it", async () => {
    expect(anthropicPlugin).toMatchObject({
      kind: 'model',
      specificationVersion: 'model-v1',
      name: 'anthropic',
    });
    process.env.ANTHROPIC_API_KEY = 'registry-key';
    process.env.ANTHROPIC_BASE_URL = server.baseURL;
    const runtime = createRuntime({ importModule: (specifier) => import(specifier) });
    const model = await runtime.registry.model('anthropic:claude-sonnet-4-5');
    expect(model).toMatchObject({ provider: 'anthropic', modelId: 'claude-sonnet-4-5' });
    server.enqueue(answer([{ type: 'text', deltas: ['via the registry'] }]));
    const agent = defineAgent({ name: 'helper', model: 'anthropic:claude-sonnet-4-5' });
    const run = await agent.ask('Hi', { runtime });
    expect(run.outcome).toBe('completed');
    expect(run.response).toBe('via the registry');
    expect(server.requests[0]?.body.model).toBe('claude-sonnet-4-5');
  });

  it('can be registered with its own settings through createAnthropic().plugin', async () => {
    const runtime = createRuntime({
      models: [createAnthropic({ apiKey: 'own-key', baseURL: server.baseURL, cache: false }).plugin],
    });
    server.enqueue(answer([{ type: 'text', deltas: ['configured'] }]));
    const run = await defineAgent({ name: 'helper', model: 'anthropic:claude-haiku-4-5' }).ask('Hi', {
      runtime,
    });
    expect(run.response).toBe('configured');
    expect(server.requests[0]?.headers.authorization).toBe('Bearer own-key');
    expect(JSON.stringify(server.requests[0]?.body)).not.toContain('cache_control');
  });
});

describe('an agent on Anthropic', () => {
  it('calls tools in parallel and sends their results back in one user turn', async () => {
    const seen: string[] = [];
    const lookup = defineTool({
      name: 'lookup',
      description: 'Looks a city up.',
      input: Type.Object({ city: Type.String() }),
      execute: ({ city }) => {
        seen.push(city);
        return { city, population: city.length * 1000 };
      },
    });
    server.enqueue(
      answer(
        [
          { type: 'text', deltas: ['Looking both up.'] },
          { type: 'tool_use', id: 'toolu_paris', name: 'lookup', json: ['{"city":', '"Paris"}'] },
          { type: 'tool_use', id: 'toolu_oslo', name: 'lookup', json: ['{"city":"Oslo"}'] },
        ],
        {
          startUsage: { input_tokens: 100, cache_creation_input_tokens: 900 },
          endUsage: { output_tokens: 30 },
        },
      ),
      answer([{ type: 'text', deltas: ['Paris is bigger.'] }], {
        startUsage: { input_tokens: 50, cache_read_input_tokens: 900, cache_creation_input_tokens: 120 },
        endUsage: { output_tokens: 7 },
      }),
    );
    const agent = defineAgent({
      name: 'geo',
      instructions: 'Answer with facts.',
      model: createAnthropic({ apiKey: 'k', baseURL: server.baseURL })('claude-sonnet-4-5'),
      tools: [lookup],
    });
    const run = await agent.ask('Which is bigger, Paris or Oslo?', { runtime: createRuntime() });
    expect(run.outcome).toBe('completed');
    expect(run.response).toBe('Paris is bigger.');
    expect(seen.sort()).toEqual(['Oslo', 'Paris']);
    expect(run.usage.toJSON()).toEqual({
      inputTokens: 1000 + 1070,
      outputTokens: 37,
      cacheReadTokens: 900,
      cacheWriteTokens: 1020,
      totalTokens: 2107,
    });
    const second = server.requests[1]?.body;
    expect(second.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Looking both up.' },
        { type: 'tool_use', id: 'toolu_paris', name: 'lookup', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'toolu_oslo', name: 'lookup', input: { city: 'Oslo' } },
      ],
    });
    expect(second.messages[2].role).toBe('user');
    expect(second.messages[2].content.map((block: { tool_use_id: string }) => block.tool_use_id)).toEqual([
      'toolu_paris',
      'toolu_oslo',
    ]);
    expect(JSON.parse(second.messages[2].content[0].content)).toEqual({ city: 'Paris', population: 5000 });
  });
});
