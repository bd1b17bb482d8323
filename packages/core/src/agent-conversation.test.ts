import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { defineAgent } from './agent.js';
import { ConfigurationError, ToolError } from './errors.js';
import type { ModelMessage } from './model.js';
import {
  ModelContentFilterError,
  ModelRateLimitError,
  ModelResponseError,
  OutputValidationError,
} from './model-errors.js';
import { createRuntime } from './runtime.js';
import type { StreamEvent } from './stream-event.js';
import { MockModel } from './testing/mock-model.js';
import { ScriptedModel } from './testing/scripted-model.js';
import { defineTool } from './tool.js';

const runtime = createRuntime();

const lookup = defineTool({
  name: 'lookup',
  description: 'Finds the help-center entry for a topic.',
  input: Type.Object({ topic: Type.String() }),
  execute: ({ topic }) => {
    if (topic !== 'refunds') throw new ToolError(`No entry for '${topic}'.`);
    return { text: 'Refunds take 5 business days.' };
  },
});

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe('conversations', () => {
  it('keeps the whole transcript in run.messages and continues it with ask([...run.messages, next])', async () => {
    const model = new ScriptedModel([
      {
        reasoning: 'Look it up.',
        toolCalls: [{ id: 'call_1', name: 'lookup', input: { topic: 'refunds' } }],
      },
      { text: 'Five business days.' },
      { text: 'Shipping takes two days.' },
    ]);
    const agent = defineAgent({ name: 'support', model, tools: [lookup] });
    const first = await agent.ask('How long do refunds take?', { runtime });
    expect(first.outcome).toBe('completed');
    expect(first.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    // Reasoning stays on the assistant message that followed it, for providers that need it back.
    expect(first.messages[1]).toMatchObject({
      role: 'assistant',
      toolCalls: [{ id: 'call_1', name: 'lookup' }],
      reasoning: [{ text: 'Look it up.', provider: 'scripted' }],
    });
    expect(Object.isFrozen(first.messages)).toBe(true);

    const second = await agent.ask([...first.messages, { role: 'user', content: 'And shipping?' }], {
      runtime,
    });
    expect(second.response).toBe('Shipping takes two days.');
    const sent = model.calls[2]?.messages ?? [];
    expect(sent).toHaveLength(5);
    expect(sent.slice(0, 4)).toEqual(first.messages);
    expect(sent[4]).toEqual({ role: 'user', content: 'And shipping?' });
    expect(second.messages).toHaveLength(6);
    expect(second.invocation.input).toBe('And shipping?');
    model.assertConsumed();
  });

  it('accepts user messages with image and file parts', async () => {
    const model = new ScriptedModel([{ text: 'A cat.' }]);
    const agent = defineAgent({ name: 'vision', model });
    const content = [
      { type: 'text', text: 'What is this?' },
      { type: 'image', data: new URL('https://example.com/cat.png') },
      { type: 'file', data: 'JVBERi0=', mediaType: 'application/pdf', filename: 'a.pdf' },
    ] as const;
    const run = await agent.ask([{ role: 'user', content }], { runtime });
    expect(run.outcome).toBe('completed');
    expect(model.calls[0]?.messages[0]).toEqual({ role: 'user', content });
    expect(run.invocation.input).toBe('What is this?');
  });

  it('rejects a malformed conversation before the run starts, saying which message is wrong', () => {
    const agent = defineAgent({ name: 'support', model: new ScriptedModel([]) });
    const cases: [unknown, RegExp][] = [
      [[], /non-empty array/],
      [[{ role: 'system', content: 'x' }], /messages\[0\] has role "system"/],
      [[{ role: 'user', content: [{ type: 'video' }] }], /messages\[0\]\.content\[0\]/],
      [[{ role: 'user', content: [{ type: 'file', data: 'AA==' }] }], /needs a mediaType/],
      [
        [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{}' }] },
          { role: 'user', content: 'and?' },
        ],
        /messages\[2\] comes before the result of tool call 'c1'/,
      ],
      [
        [
          { role: 'user', content: 'hi' },
          { role: 'tool', toolCallId: 'c9', toolName: 'lookup', content: '{}' },
        ],
        /answers tool call 'c9'/,
      ],
      [
        [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{}' }] },
        ],
        /messages\[2\] comes before the result of tool call 'c1'/,
      ],
      [42, /string or an array of messages/],
    ];
    for (const [input, message] of cases) {
      let thrown: unknown;
      try {
        agent.createRun(input as ModelMessage[], { runtime });
      } catch (error) {
        thrown = error;
      }
      expect(ConfigurationError.isInstance(thrown), JSON.stringify(input)).toBe(true);
      expect((thrown as Error).message).toMatch(message);
    }
  });

  it('keeps the transcript of a run that failed', async () => {
    const model = new MockModel({
      stream: (_request, _options, call) =>
        call === 0
          ? [
              { type: 'tool-call-start', index: 0, id: 'c1', name: 'lookup' },
              { type: 'tool-call-delta', index: 0, argumentsDelta: '{"topic":"refunds"}' },
              { type: 'tool-call-stop', index: 0 },
              { type: 'finish', reason: 'tool-calls' },
            ]
          : [{ type: 'text-delta', text: 'Five' }],
    });
    const run = await defineAgent({ name: 'support', model, tools: [lookup] }).ask('refunds?', { runtime });
    expect(run.outcome).toBe('failed');
    expect(ModelResponseError.isInstance(run.error)).toBe(true);
    expect(run.error?.message).toMatch(/without a 'finish' part/);
    expect(run.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool']);
  });
});

describe('model turns', () => {
  it('streams each provider retry as a model_retry event and keeps response metadata on model_stop', async () => {
    const limited = new ModelRateLimitError('openai answered 429: slow down.', {
      retryAfterMs: 1200,
      statusCode: 429,
    });
    const model = new MockModel({
      stream: () => [
        { type: 'retry', attempt: 2, delayMs: 1200, error: limited },
        { type: 'response-metadata', id: 'resp_1', modelId: 'gpt-5.1-2026-11-01' },
        { type: 'text-delta', text: 'Hi.' },
        { type: 'finish', reason: 'stop', rawReason: 'completed' },
      ],
    });
    const stream = defineAgent({ name: 'a', model }).streamAsk('hi', { runtime });
    const events = await collect(stream);
    const retry = events.find((event) => event.type === 'model_retry');
    expect(retry?.data).toEqual({
      turn: 1,
      attempt: 2,
      delayMs: 1200,
      error: {
        name: 'ModelRateLimitError',
        code: 'MODEL_RATE_LIMITED',
        message: 'openai answered 429: slow down.',
      },
    });
    expect(events.find((event) => event.type === 'model_stop')?.data).toEqual({
      turn: 1,
      finishReason: 'stop',
      rawFinishReason: 'completed',
      responseId: 'resp_1',
      responseModelId: 'gpt-5.1-2026-11-01',
      text: 'Hi.',
    });
    expect((await stream.run).outcome).toBe('completed');
  });

  it('fails the run when a provider retries after its answer began', async () => {
    const model = new MockModel({
      stream: () => [
        { type: 'text-delta', text: 'Hi' },
        { type: 'retry', attempt: 2, delayMs: 0, error: new Error('lost') },
        { type: 'finish', reason: 'stop' },
      ],
    });
    const run = await defineAgent({ name: 'a', model }).ask('hi', { runtime });
    expect(run.outcome).toBe('failed');
    expect(run.error?.message).toMatch(/retried its request on turn 1 after its answer had begun/);
  });

  it('fails the run with ModelContentFilterError when the answer is filtered, keeping the raw reason', async () => {
    const model = new MockModel({
      stream: () => [
        { type: 'text-delta', text: 'Part' },
        { type: 'finish', reason: 'content-filter', rawReason: 'refusal' },
      ],
    });
    const run = await defineAgent({ name: 'a', model }).ask('hi', { runtime });
    expect(run.outcome).toBe('failed');
    expect(ModelContentFilterError.isInstance(run.error)).toBe(true);
    expect(run.error?.message).toMatch(/content filter.*\(refusal\)/);
  });

  it('sends model settings and provider options, the ask options over the agent options', async () => {
    const model = new ScriptedModel([{ text: 'ok' }]);
    const agent = defineAgent({
      name: 'a',
      model,
      modelSettings: { temperature: 0.2, maxOutputTokens: 100 },
      providerOptions: { openai: { store: false, user: 'u1' }, anthropic: { cache: false } },
    });
    await agent.ask('hi', {
      runtime,
      modelSettings: { temperature: 0.7 },
      providerOptions: { openai: { user: 'u2' } },
    });
    expect(model.calls[0]?.settings).toEqual({ temperature: 0.7, maxOutputTokens: 100 });
    expect(model.calls[0]?.providerOptions).toEqual({
      openai: { store: false, user: 'u2' },
      anthropic: { cache: false },
    });
    expect(() => defineAgent({ name: 'b', model, modelSettings: 3 as never })).toThrow(
      /modelSettings must be an object/,
    );
  });
});

describe('structured output', () => {
  const Answer = Type.Object({ days: Type.Integer(), summary: Type.String() });

  it('asks for JSON with the schema and gives run.output, typed from the schema', async () => {
    const model = new ScriptedModel([
      { text: '```json\n{"days": 5, "summary": "Five business days."}\n```' },
    ]);
    const agent = defineAgent({ name: 'a', model, output: Answer });
    const run = await agent.ask('How long do refunds take?', { runtime });
    expect(run.outcome).toBe('completed');
    const days: number | undefined = run.output?.days;
    expect(days).toBe(5);
    expect(run.output).toEqual({ days: 5, summary: 'Five business days.' });
    expect(model.calls[0]?.output).toMatchObject({
      type: 'json',
      name: 'output',
      schema: { type: 'object', required: ['days', 'summary'] },
    });
  });

  it('gives the model one repair turn naming what did not match, per ask', async () => {
    const model = new ScriptedModel([{ text: '{"days": "five"}' }, { text: '{"days": 5, "summary": "ok"}' }]);
    const agent = defineAgent({ name: 'a', model });
    const run = await agent.ask('refunds?', { runtime, output: Answer });
    expect(run.outcome).toBe('completed');
    expect(run.output?.summary).toBe('ok');
    const repair = model.calls[1]?.messages.at(-1);
    expect(repair?.role).toBe('user');
    expect(repair?.content).toMatch(/does not match the required JSON schema: .*\/days/);
    model.assertConsumed();
  });

  it('fails with OutputValidationError after the repair turn also misses', async () => {
    const model = new ScriptedModel([{ text: 'I think five days.' }, { text: '{"days": 5}' }]);
    const run = await defineAgent({ name: 'a', model, output: Answer }).ask('refunds?', { runtime });
    expect(run.outcome).toBe('failed');
    expect(OutputValidationError.isInstance(run.error)).toBe(true);
    const error = run.error as OutputValidationError;
    expect(error.text).toBe('{"days": 5}');
    expect(error.problems.join('\n')).toMatch(/summary/);
    expect(run.output).toBeUndefined();
  });

  it('rejects an output that is not a schema at definition time', () => {
    expect(() => defineAgent({ name: 'a', model: new ScriptedModel([]), output: 5 as never })).toThrow(
      /output that is not a schema/,
    );
  });
});

describe('models by name', () => {
  it('resolves a model registered with createRuntime({ models: { local } }) by its name', async () => {
    const local = new ScriptedModel([{ text: 'from local' }], {
      provider: 'ollama',
      modelId: 'qwen2.5-coder',
    });
    const withLocal = createRuntime({ models: { local } });
    const run = await defineAgent({ name: 'a', model: 'local' }).ask('hi', { runtime: withLocal });
    expect(run.response).toBe('from local');
    await expect(withLocal.registry.model('remote')).rejects.toThrow(
      /not a registered model name \(registered: local\)/,
    );
    expect(() => createRuntime({ models: { 'bad:name': local } })).toThrow(/no colon/);
    expect(() => createRuntime({ models: { other: {} as never } })).toThrow(/specification/);
  });

  it('names the package to install for the built-in OpenAI and Anthropic model names', async () => {
    const missing = createRuntime({
      importModule: async (specifier) => {
        throw Object.assign(new Error(`Cannot find package '${specifier}' imported from /app/main.js`), {
          code: 'ERR_MODULE_NOT_FOUND',
        });
      },
    });
    await expect(missing.registry.model('openai-chat:gpt-4.1')).rejects.toThrow(
      /pnpm add @ghost\/provider-openai\./,
    );
    await expect(missing.registry.model('openai-compatible:http://127.0.0.1:11434/v1#qwen')).rejects.toThrow(
      /pnpm add @ghost\/provider-openai\./,
    );
    await expect(missing.registry.model('anthropic:claude-sonnet-4-5')).rejects.toThrow(
      /pnpm add @ghost\/provider-anthropic\./,
    );
  });
});
