import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { defineAgent } from './agent.js';
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
