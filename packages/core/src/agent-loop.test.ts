import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { defineAgent } from './agent.js';
import type { ModelStreamLimits, ModelStreamOptions, ModelStreamPart } from './model.js';
import { defaultModelStreamLimits } from './model.js';
import { ModelResponseError, ModelUnavailableError } from './model-errors.js';
import { MockModel } from './testing/mock-model.js';
import { ScriptedModel } from './testing/scripted-model.js';
import { defineTool } from './tool.js';

const echo = defineTool({
  name: 'echo',
  description: 'Returns its input.',
  input: Type.Object({ value: Type.Unknown() }),
  execute: ({ value }) => ({ value }),
});

/** `depth` arrays nested in one another: `[[[]]]` for 3. */
function nestedArrays(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`;
}

function toolMessages(model: ScriptedModel) {
  return (model.calls.at(-1)?.messages ?? []).filter((message) => message.role === 'tool');
}

const never = new Promise<never>(() => {});

describe('tool call arguments nested deeper than the pipeline can walk', () => {
  it('answers arguments nested 20,000 deep with a tool error the model reads, and the run goes on', async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ id: 'deep', name: 'echo', input: `{"value":${nestedArrays(20_000)}}` }] },
      { text: 'I will send flatter arguments.' },
    ]);
    const run = await defineAgent({ name: 'a', model, tools: [echo] }).ask('go');
    expect(run.error).toBeUndefined();
    expect(run.outcome).toBe('completed');
    expect(toolMessages(model)).toEqual([
      {
        role: 'tool',
        toolCallId: 'deep',
        toolName: 'echo',
        content:
          'Invalid tool input: /: arguments nest deeper than 256 levels of arrays and objects; send flatter arguments',
        isError: true,
      },
    ]);
  });

  it('takes 256 levels, refuses 257, and does not count brackets inside strings', async () => {
    const model = new ScriptedModel([
      {
        toolCalls: [
          // The arguments object is the first level.
          { id: 'deepest', name: 'echo', input: `{"value":${nestedArrays(255)}}` },
          { id: 'too-deep', name: 'echo', input: `{"value":${nestedArrays(256)}}` },
          { id: 'text', name: 'echo', input: { value: `\\"${'['.repeat(1000)}` } },
        ],
      },
      { text: 'done' },
    ]);
    const run = await defineAgent({ name: 'a', model, tools: [echo] }).ask('go');
    expect(run.outcome).toBe('completed');
    const errors = toolMessages(model).map((message) => message.role === 'tool' && message.isError === true);
    expect(errors).toEqual([false, true, false]);
  });
});

describe('the bounds of one model answer', () => {
  it('passes the agent limits to the model with every call', async () => {
    const seen: (ModelStreamLimits | undefined)[] = [];
    const model = new MockModel({
      stream: (_request, options) => {
        seen.push(options.limits);
        return [{ type: 'finish', reason: 'stop' }];
      },
    });
    await defineAgent({ name: 'a', model, limits: { maxToolCallBytes: 1234 } }).ask('go');
    expect(seen).toEqual([{ ...defaultModelStreamLimits, maxToolCallBytes: 1234 }]);
  });

  it('ends the turn at the tool call past maxToolCallsPerAnswer, and tells the model to stop', async () => {
    let isStopped = false;
    const model = new MockModel({
      async *stream(_request, _options, callIndex) {
        if (callIndex > 0) {
          yield { type: 'text-delta', text: 'done' };
          yield { type: 'finish', reason: 'stop' };
          return;
        }
        try {
          for (let index = 0; index < 10; index += 1) {
            yield { type: 'tool-call-start', index, id: `call_${index}`, name: 'echo' };
            yield { type: 'tool-call-delta', index, argumentsDelta: '{"value":1}' };
            yield { type: 'tool-call-stop', index };
          }
          yield { type: 'finish', reason: 'tool-calls' };
        } finally {
          isStopped = true;
        }
      },
    });
    const run = await defineAgent({
      name: 'a',
      model,
      tools: [echo],
      limits: { maxToolCallsPerAnswer: 3 },
    }).ask('go');
    expect(run.outcome).toBe('failed');
    expect(ModelResponseError.isInstance(run.error)).toBe(true);
    expect(run.error).toMatchObject({
      code: 'MODEL_TOO_MANY_TOOL_CALLS',
      limit: 'maxToolCallsPerAnswer',
      provider: 'mock',
    });
    expect(run.error?.message).toMatch(
      /calls more than 3 tools in one answer .*limits\.maxToolCallsPerAnswer/,
    );
    expect(isStopped).toBe(true);
  });

  it('ends the turn when one call arguments pass maxToolCallBytes, counted in UTF-8 bytes', async () => {
    const model = new MockModel({
      stream: () => [
        { type: 'tool-call-start', index: 0, id: 'a', name: 'echo' },
        { type: 'tool-call-delta', index: 0, argumentsDelta: '{"value":"éé' }, // 14 bytes, 12 characters
        { type: 'tool-call-delta', index: 0, argumentsDelta: '"}' },
        { type: 'tool-call-stop', index: 0 },
        { type: 'finish', reason: 'tool-calls' },
      ],
    });
    const run = await defineAgent({ name: 'a', model, tools: [echo], limits: { maxToolCallBytes: 15 } }).ask(
      'go',
    );
    expect(run.error).toMatchObject({ code: 'MODEL_TOOL_CALL_TOO_LARGE', limit: 'maxToolCallBytes' });
  });

  it('counts text, reasoning and arguments once each toward maxAnswerBytes', async () => {
    const parts: ModelStreamPart[] = [
      { type: 'reasoning-delta', text: 'think' },
      { type: 'reasoning-end', reasoning: { text: 'think', provider: 'mock' } },
      // A block whose text came without deltas counts here.
      { type: 'reasoning-end', reasoning: { text: 'again', provider: 'mock', signature: 'sig' } },
      { type: 'text-delta', text: 'hello' },
      { type: 'finish', reason: 'stop' },
    ];
    const answer = (limit: number) =>
      defineAgent({
        name: 'a',
        model: new MockModel({ stream: () => parts }),
        limits: { maxAnswerBytes: limit },
      }).ask('go');
    // think (5) + again (5) + sig (3) + hello (5) = 18
    expect((await answer(18)).outcome).toBe('completed');
    const over = await answer(17);
    expect(over.outcome).toBe('failed');
    expect(over.error).toMatchObject({ code: 'MODEL_ANSWER_TOO_LARGE', limit: 'maxAnswerBytes' });
  });

  it('ends a stream that stalls mid-answer, even one that ignores its signal, and aborts that signal', async () => {
    let modelSignal: AbortSignal | undefined;
    const model = new MockModel({
      async *stream(_request, options: ModelStreamOptions) {
        modelSignal = options.signal;
        yield { type: 'text-delta', text: 'Hel' };
        await never;
      },
    });
    const run = await defineAgent({ name: 'a', model, limits: { streamIdleTimeoutMs: 20 } }).ask('go');
    expect(run.outcome).toBe('failed');
    expect(ModelUnavailableError.isInstance(run.error)).toBe(true);
    expect(run.error).toMatchObject({ code: 'MODEL_STREAM_IDLE', limit: 'streamIdleTimeoutMs' });
    expect(modelSignal?.aborted).toBe(true);
    expect(modelSignal?.reason).toBe(run.error);
  });

  it('waits as long as a retry part announced before giving up on the next part', async () => {
    const model = new MockModel({
      async *stream() {
        yield { type: 'retry', attempt: 2, delayMs: 4_000, error: new ModelUnavailableError('503') };
        // Past the idle timeout and its grace, within them plus the announced delay.
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        yield { type: 'text-delta', text: 'ok' };
        yield { type: 'finish', reason: 'stop' };
      },
    });
    const run = await defineAgent({ name: 'a', model, limits: { streamIdleTimeoutMs: 20 } }).ask('go');
    expect(run.error).toBeUndefined();
    expect(run.response).toBe('ok');
  });
});
