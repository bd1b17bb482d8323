import { defineTool } from '@ghost/core';
import type { BrokeredToolCall, ToolCallOutcome } from '@ghost/core/tool-calls';
import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { ToolBroker } from './tool-broker.js';
import { ToolCatalog } from './tool-catalog.js';

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a word up.',
  input: Type.Object({ word: Type.String() }),
  execute: async ({ word }) => word,
});

function outcome(call: BrokeredToolCall): ToolCallOutcome {
  return {
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    status: 'success',
    value: call.input,
    content: 'found',
    artifacts: [],
  };
}

/** A broker whose tool calls finish only when the test says so, so calls pile up in its queue. */
function heldBroker(concurrency: number) {
  const started: BrokeredToolCall[] = [];
  const finishers: (() => void)[] = [];
  const broker = new ToolBroker({
    catalog: ToolCatalog.fromTools([lookup], 'test'),
    limits: { toolCalls: 100, concurrency, resultBytes: 10_000 },
    callTool: (call) => {
      started.push(call);
      // Ignores its abort signal on purpose: a tool that does not stop must not hold back the queue.
      return new Promise((resolve) => finishers.push(() => resolve(outcome(call))));
    },
  });
  return { program: broker.openProgram('program-1', () => 'exec-1'), started, finishers };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('ProgramToolCalls', () => {
  it('runs at most `concurrency` calls at once and the rest in the order they were made', async () => {
    const { program, started, finishers } = heldBroker(2);
    const results = [0, 1, 2, 3].map((index) =>
      program.call({ callId: `call-${index}`, name: 'lookup', input: { word: `w${index}` } }),
    );
    await tick();
    expect(started.map((call) => call.input)).toEqual([{ word: 'w0' }, { word: 'w1' }]);
    finishers[0]?.();
    await tick();
    expect(started.map((call) => call.input)).toEqual([{ word: 'w0' }, { word: 'w1' }, { word: 'w2' }]);
    finishers[1]?.();
    await tick();
    finishers[2]?.();
    await tick();
    finishers[3]?.();
    const answers = await Promise.all(results);
    expect(answers.map((answer) => answer.result)).toEqual([
      { callId: 'call-0', ok: true, value: { word: 'w0' } },
      { callId: 'call-1', ok: true, value: { word: 'w1' } },
      { callId: 'call-2', ok: true, value: { word: 'w2' } },
      { callId: 'call-3', ok: true, value: { word: 'w3' } },
    ]);
  });

  it('answers queued calls at once when the program ends, without running them or waiting for a call in flight', async () => {
    const { program, started, finishers } = heldBroker(1);
    const inFlight = program.call({ callId: 'call-0', name: 'lookup', input: { word: 'w0' } });
    const queued = [
      program.call({ callId: 'call-1', name: 'lookup', input: { word: 'w1' } }),
      program.call({ callId: 'call-2', name: 'lookup', input: { word: 'w2' } }),
    ];
    await tick();
    program.end();
    const answers = await Promise.all(queued);
    expect(answers.map((answer) => answer.result)).toEqual([
      { callId: 'call-1', ok: false, error: 'The program ended before this call ran.' },
      { callId: 'call-2', ok: false, error: 'The program ended before this call ran.' },
    ]);
    expect(started).toHaveLength(1);
    expect(started[0]?.signal?.aborted).toBe(true);
    finishers[0]?.();
    expect((await inFlight).result).toEqual({
      callId: 'call-0',
      ok: false,
      error: 'The program ended before this call finished.',
    });
  });
});
