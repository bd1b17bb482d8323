import { describe, expect, it } from 'vitest';
import type { ModelRequest, ModelStreamPart } from '../model.js';
import { MockModel } from './mock-model.js';
import { countOpenHandles, newOpenHandles } from './open-handles.js';
import { ScriptedModel } from './scripted-model.js';

const request: ModelRequest = { instructions: 'i', messages: [{ role: 'user', content: 'hi' }], tools: [] };

async function parts(model: ScriptedModel | MockModel, signal = new AbortController().signal) {
  const collected: ModelStreamPart[] = [];
  for await (const part of model.stream(request, { signal })) collected.push(part);
  return collected;
}

describe('ScriptedModel', () => {
  it('answers one step per call with text chunks, tool calls, usage and a finish reason', async () => {
    const model = new ScriptedModel([
      {
        text: ['a', 'b'],
        toolCalls: [
          { name: 't', input: { x: 1 } },
          { id: 'mine', name: 'u', input: 'raw' },
        ],
      },
      { text: 'done', usage: { inputTokens: 1 } },
    ]);
    expect(await parts(model)).toEqual([
      { type: 'text-delta', text: 'a' },
      { type: 'text-delta', text: 'b' },
      { type: 'tool-call-start', index: 0, id: 'call_1_1', name: 't' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"x":1}' },
      { type: 'tool-call-stop', index: 0 },
      { type: 'tool-call-start', index: 1, id: 'mine', name: 'u' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: 'raw' },
      { type: 'tool-call-stop', index: 1 },
      { type: 'finish', reason: 'tool-calls' },
    ]);
    expect(model.remainingSteps).toBe(1);
    expect(() => model.assertConsumed()).toThrow(/1 unused step/);
    expect((await parts(model)).at(-1)).toEqual({ type: 'finish', reason: 'stop' });
    expect(model.calls).toEqual([request, request]);
    model.assertConsumed();
    await expect(parts(model)).rejects.toThrow(/called 3 times but has only 2 step/);
  });

  it('stops waiting at once when its signal aborts, leaving no timer', async () => {
    const before = countOpenHandles();
    const controller = new AbortController();
    const model = new ScriptedModel([{ text: 'slow', delayMs: 10_000 }]);
    const pending = parts(model, controller.signal);
    controller.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
    expect(await newOpenHandles(before)).toEqual([]);
  });
});

describe('MockModel', () => {
  it('streams what its function returns and records calls', async () => {
    const model = new MockModel({
      stream: (_request, _options, call) => [{ type: 'text-delta', text: `call ${call}` }],
    });
    expect(await parts(model)).toEqual([{ type: 'text-delta', text: 'call 0' }]);
    expect(await parts(model)).toEqual([{ type: 'text-delta', text: 'call 1' }]);
    expect(model.calls).toHaveLength(2);
  });
});
