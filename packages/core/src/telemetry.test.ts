import { AsyncLocalStorage } from 'node:async_hooks';
import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { defineAgent } from './agent.js';
import { createRuntime } from './runtime.js';
import type { StreamEvent } from './stream-event.js';
import type { RunTelemetry, TelemetryEventDetail, TelemetryScope, TelemetryV1 } from './telemetry.js';
import { MockModel } from './testing/mock-model.js';
import { ScriptedModel } from './testing/scripted-model.js';
import { defineTool } from './tool.js';

/** A plugin that records what it sees and keeps the current scope in AsyncLocalStorage, as a tracer would. */
function recordingTelemetry() {
  const current = new AsyncLocalStorage<string>();
  const events: { type: string; detail: TelemetryEventDetail }[] = [];
  const starts: string[] = [];
  const plugin: TelemetryV1 = {
    specificationVersion: 'telemetry-v1',
    name: 'recording',
    startRun: ({ agentName }) => {
      starts.push(agentName);
      return {
        onEvent: (event: StreamEvent, detail: TelemetryEventDetail) =>
          events.push({ type: event.type, detail }),
        runInScope: <Result>(scope: TelemetryScope, work: () => Result) =>
          current.run(scopeName(scope), work),
      };
    },
  };
  return { plugin, events, starts, scope: () => current.getStore() };
}

function scopeName(scope: TelemetryScope): string {
  switch (scope.kind) {
    case 'run':
      return 'run';
    case 'model':
      return `model ${scope.turn}`;
    case 'tool':
      return `tool ${scope.toolCallId}`;
    case 'step':
      return `step ${scope.stepId}`;
  }
}

describe('telemetry', () => {
  it('sees every event and makes the run, each model turn and each tool call current while they work', async () => {
    const recording = recordingTelemetry();
    const scopesSeen: (string | undefined)[] = [];
    const probe = defineTool({
      name: 'probe',
      description: 'Says which scope is current.',
      input: Type.Object({}),
      execute: async () => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        scopesSeen.push(`tool sees ${recording.scope()}`);
        return 'ok';
      },
    });
    const model = new MockModel({
      stream: async function* (_request, _options, call) {
        scopesSeen.push(`model sees ${recording.scope()}`);
        if (call === 0) {
          yield { type: 'tool-call-start', index: 0, id: 'c1', name: 'probe' };
          yield { type: 'tool-call-delta', index: 0, argumentsDelta: '{}' };
          yield { type: 'tool-call-stop', index: 0 };
          yield { type: 'finish', reason: 'tool-calls' };
        } else {
          yield { type: 'text-delta', text: 'done' };
          yield { type: 'finish', reason: 'stop' };
        }
      },
    });
    const runtime = createRuntime({ telemetry: recording.plugin });
    const run = await defineAgent({ name: 'traced', model, tools: [probe] }).ask('go', { runtime });
    expect(run.outcome).toBe('completed');
    expect(recording.starts).toEqual(['traced']);
    expect(scopesSeen).toEqual(['model sees model 1', 'tool sees tool c1', 'model sees model 2']);
    const types = recording.events.map((event) => event.type);
    expect(types[0]).toBe('run_start');
    expect(types.at(-1)).toBe('run_stop');
    expect(types).toContain('tool_start');
    const modelStart = recording.events.find((event) => event.type === 'model_start');
    expect(modelStart?.detail.request?.messages).toEqual([{ role: 'user', content: 'go' }]);
    expect(recording.events.every((event) => event.detail.hidden !== true)).toBe(true);
  });

  it('takes plugins from the runtime and the agent, and a plugin that throws changes nothing', async () => {
    const fromRuntime = recordingTelemetry();
    const fromAgent = recordingTelemetry();
    const broken: TelemetryV1 = {
      specificationVersion: 'telemetry-v1',
      name: 'broken',
      startRun: (): RunTelemetry => ({
        onEvent: () => {
          throw new Error('exporter down');
        },
        runInScope: () => {
          throw new Error('no context');
        },
      }),
    };
    const skipping: TelemetryV1 = {
      specificationVersion: 'telemetry-v1',
      name: 'skipping',
      startRun: () => ({ onEvent: () => {}, runInScope: () => undefined as never }),
    };
    const failingStart: TelemetryV1 = {
      specificationVersion: 'telemetry-v1',
      name: 'failing',
      startRun: () => {
        throw new Error('cannot start');
      },
    };
    const runtime = createRuntime({ telemetry: [fromRuntime.plugin, broken] });
    const agent = defineAgent({
      name: 'a',
      model: new ScriptedModel([{ text: 'hello' }]),
      telemetry: [fromAgent.plugin, skipping, failingStart],
    });
    const run = await agent.ask('hi', { runtime });
    expect(run.outcome).toBe('completed');
    expect(run.response).toBe('hello');
    expect(fromRuntime.events.map((event) => event.type)).toEqual(
      fromAgent.events.map((event) => event.type),
    );
    expect(fromAgent.events.at(-1)?.type).toBe('run_stop');
  });

  it('rejects something that is not a telemetry plugin at definition time', () => {
    expect(() => createRuntime({ telemetry: {} as never })).toThrow(/telemetry-v1/);
    expect(() =>
      defineAgent({ name: 'a', model: new ScriptedModel([]), telemetry: [{ name: 'x' }] as never }),
    ).toThrow(/Agent 'a': telemetry must be a telemetry plugin/);
  });
});
