import { codeMode } from '@ghost/code-mode';
import { createRuntime, defineAgent, defineTool, type StreamEvent } from '@ghost/core';
import type { TelemetryEventDetail, TelemetryV1 } from '@ghost/core/plugin';
import { ScriptedModel } from '@ghost/core/testing';
import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { quickjsEngine } from './quickjs-engine.js';

const echo = defineTool({
  name: 'echo',
  description: 'Returns its input.',
  input: Type.Object({ text: Type.String() }),
  execute: ({ text }) => text,
});

describe('telemetry of a code-mode run', () => {
  it("sees the exec call the public stream hides, and the program's tool calls under it", async () => {
    const observed: { event: StreamEvent; detail: TelemetryEventDetail }[] = [];
    const telemetry: TelemetryV1 = {
      specificationVersion: 'telemetry-v1',
      name: 'recording',
      startRun: () => ({
        onEvent: (event, detail) => observed.push({ event, detail }),
        runInScope: (_scope, work) => work(),
      }),
    };
    const runtime = createRuntime({ engines: [quickjsEngine], codeMode: { sandbox: 'unrestricted' } });
    const model = new ScriptedModel([
      {
        toolCalls: [
          {
            id: 'exec_1',
            name: 'exec',
            input: { source: 'await Promise.all([tools.echo({ text: "a" }), tools.echo({ text: "b" })])' },
          },
        ],
      },
      { text: 'done' },
    ]);
    const agent = defineAgent({ name: 'a', model, tools: [echo], codeMode: codeMode(), telemetry });
    const stream = agent.streamAsk('go', { runtime });
    const publicEvents: StreamEvent[] = [];
    for await (const event of stream) publicEvents.push(event);
    expect((await stream.run).outcome).toBe('completed');

    const execStarts = (events: StreamEvent[]) =>
      events.filter((event) => event.type === 'tool_start' && event.data.toolName === 'exec');
    expect(execStarts(publicEvents)).toEqual([]);
    const hiddenExec = observed.filter(
      ({ event }) =>
        event.type.startsWith('tool_') && 'toolName' in event.data && event.data.toolName === 'exec',
    );
    expect(hiddenExec.map(({ event }) => event.type)).toEqual([
      'tool_call_start',
      'tool_call_delta',
      'tool_call_stop',
      'tool_start',
      'tool_stop',
    ]);
    expect(hiddenExec.every(({ detail }) => detail.hidden === true)).toBe(true);
    const brokered = observed.filter(
      ({ event }) => event.type === 'tool_start' && event.data.toolName === 'echo',
    );
    expect(brokered).toHaveLength(2);
    for (const { event, detail } of brokered) {
      expect(event.type === 'tool_start' && event.data.parentToolCallId).toBe('exec_1');
      expect(detail.hidden).toBeUndefined();
    }
    // The exec call starts before its program's calls and stops after them.
    const order = observed.map(
      ({ event }) => `${event.type}:${'toolName' in event.data ? event.data.toolName : ''}`,
    );
    expect(order.indexOf('tool_start:exec')).toBeLessThan(order.indexOf('tool_start:echo'));
    expect(order.lastIndexOf('tool_stop:echo')).toBeLessThan(order.indexOf('tool_stop:exec'));
  });
});
