import { codeMode } from '@ghost/code-mode';
import { createRuntime, defineAgent, defineTool } from '@ghost/core';
import type { TelemetryV1 } from '@ghost/core/plugin';
import type { ModelStreamPart } from '@ghost/core/provider';
import { MockModel, ScriptedModel } from '@ghost/core/testing';
import { quickjsEngine } from '@ghost/engine-quickjs';
import { bwrapSandbox } from '@ghost/sandbox-bwrap';
import { SpanStatusCode } from '@opentelemetry/api';
import Type from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTelemetry } from './open-telemetry.js';
import {
  childrenOf,
  inMemoryTracing,
  onlySpan,
  spanTree,
  useAsyncContext,
} from './test-support/in-memory-tracing.js';

const detection = await bwrapSandbox.detect();
const unavailable = detection.available
  ? ''
  : ` (skipped: bubblewrap is not usable here: ${detection.reason})`;

let stopAsyncContext: () => void;
beforeAll(() => {
  stopAsyncContext = useAsyncContext();
});
afterAll(() => stopAsyncContext());

const lookup = defineTool({
  name: 'help_center_lookup',
  description: 'Returns the help-center entry for a topic.',
  input: Type.Object({ topic: Type.String() }),
  execute: ({ topic }) => ({ topic, text: `All about ${topic}.` }),
});

/** A deferred promise: `settle` resolves it. */
function signalled() {
  let settle: () => void = () => {};
  const promise = new Promise<void>((resolve) => {
    settle = resolve;
  });
  return { promise, settle };
}

/**
 * A tool that waits until the test opens it, so a program can be held past its observation
 * window; its nth call waits for the nth opening, and says when it started.
 */
function gateTool(calls = 1) {
  const openings = Array.from({ length: calls }, signalled);
  const starts = Array.from({ length: calls }, signalled);
  let count = 0;
  const tool = defineTool({
    name: 'gate',
    description: 'Waits until it is opened.',
    input: Type.Object({}),
    execute: async (_input, { signal }) => {
      const call = count;
      count += 1;
      starts[call]?.settle();
      await new Promise<void>((resolve, reject) => {
        void openings[call]?.promise.then(resolve);
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
      return 'open';
    },
  });
  return {
    tool,
    open: (call: number) => openings[call]?.settle(),
    started: (call: number) => starts[call]?.promise,
  };
}

function setUp(captureContent = false) {
  const tracing = inMemoryTracing();
  const runtime = createRuntime({
    engines: [quickjsEngine],
    sandboxes: [bwrapSandbox],
    telemetry: openTelemetry({ tracerProvider: tracing.provider, captureContent }),
  });
  return { tracing, runtime };
}

function toolCall(id: string, name: string, input: unknown): ModelStreamPart[] {
  return [
    { type: 'tool-call-start', index: 0, id, name },
    { type: 'tool-call-delta', index: 0, argumentsDelta: JSON.stringify(input) },
    { type: 'tool-call-stop', index: 0 },
    { type: 'finish', reason: 'tool-calls' },
  ];
}

describe('tracing a code-mode run', () => {
  it.skipIf(!detection.available)(
    `nests the program's tool calls under its exec call, inside the run, with the engine and sandbox${unavailable}`,
    async () => {
      const { tracing, runtime } = setUp(true);
      const source = [
        'const [a, b] = await Promise.all([',
        "  tools.help_center_lookup({ topic: 'refunds' }),",
        "  tools.help_center_lookup({ topic: 'shipping' }),",
        ']);',
        'text(a.text + " " + b.text)',
      ].join('\n');
      const model = new ScriptedModel([
        { toolCalls: [{ id: 'exec_1', name: 'exec', input: { source } }] },
        { text: 'All about refunds. All about shipping.' },
      ]);
      const agent = defineAgent({ name: 'research', model, tools: [lookup], codeMode: codeMode() });
      const run = await agent.ask('Refunds and shipping?', { runtime });
      expect(run.outcome).toBe('completed');
      expect(run.sandbox?.name).toBe('bwrap');

      const spans = tracing.finished();
      expect(spanTree(spans)).toEqual([
        'invoke_agent research',
        '  chat scripted-model',
        '  execute_tool exec',
        '    execute_tool help_center_lookup',
        '    execute_tool help_center_lookup',
        '  chat scripted-model',
      ]);
      const exec = onlySpan(spans, 'execute_tool exec');
      expect(exec.attributes).toMatchObject({
        'gen_ai.tool.call.id': 'exec_1',
        'ghost.code_mode.engine': 'quickjs',
        'ghost.code_mode.sandbox': 'bwrap',
        'ghost.code_mode.program.status': 'completed',
        'ghost.code_mode.program.source': source,
      });
      expect(exec.status.code).toBe(SpanStatusCode.UNSET);
      const topics = childrenOf(spans, exec).map(
        (span) => JSON.parse(String(span.attributes['gen_ai.tool.call.arguments'])).topic,
      );
      expect(topics.sort()).toEqual(['refunds', 'shipping']);
      expect(new Set(spans.map((span) => span.spanContext().traceId)).size).toBe(1);
    },
  );

  it.skipIf(!detection.available)(
    `nests an agent a program calls (asTool) under that call, under the exec that ran the program${unavailable}`,
    async () => {
      const { tracing, runtime } = setUp();
      const researcher = defineAgent({
        name: 'researcher',
        model: new ScriptedModel([
          { toolCalls: [{ name: 'help_center_lookup', input: { topic: 'refunds' } }] },
          { text: 'Refunds take 5 business days.' },
        ]),
        tools: [lookup],
      });
      const source = "text(await tools.researcher({ input: 'How long do refunds take?' }))";
      const model = new ScriptedModel([
        { toolCalls: [{ id: 'exec_1', name: 'exec', input: { source } }] },
        { text: 'Five business days.' },
      ]);
      const agent = defineAgent({
        name: 'support',
        model,
        tools: [researcher.asTool()],
        codeMode: codeMode(),
      });
      const run = await agent.ask('Refunds?', { runtime });
      expect(run.outcome).toBe('completed');

      const spans = tracing.finished();
      expect(spanTree(spans)).toEqual([
        'invoke_agent support',
        '  chat scripted-model',
        '  execute_tool exec',
        '    execute_tool researcher',
        '      invoke_agent researcher',
        '        chat scripted-model',
        '        execute_tool help_center_lookup',
        '        chat scripted-model',
        '  chat scripted-model',
      ]);
      expect(new Set(spans.map((span) => span.spanContext().traceId)).size).toBe(1);
      expect(tracing.started().filter((span) => !span.ended)).toEqual([]);
    },
  );

  it.skipIf(!detection.available)(
    `keeps a program's calls under its exec after exec returned still working, and under the wait that watches it${unavailable}`,
    async () => {
      const { tracing, runtime } = setUp();
      const gate = gateTool(2);
      const source = [
        "await tools.help_center_lookup({ topic: 'a' });",
        'await tools.gate({});',
        "await tools.help_center_lookup({ topic: 'b' });",
        'await tools.gate({});',
        "await tools.help_center_lookup({ topic: 'c' });",
      ].join('\n');
      const model = new MockModel({
        stream: async function* (_request, _options, call) {
          if (call === 0) {
            yield* toolCall('exec_1', 'exec', { source });
          } else if (call === 1) {
            // exec has returned still_working: the program's next calls run before any wait.
            gate.open(0);
            await gate.started(1);
            yield* toolCall('wait_1', 'wait', {});
          } else {
            yield { type: 'text-delta', text: 'Done.' };
            yield { type: 'finish', reason: 'stop' };
          }
        },
      });
      // Lets the program go on once the wait call watches it.
      const openOnWait: TelemetryV1 = {
        specificationVersion: 'telemetry-v1',
        name: 'open-on-wait',
        startRun: () => ({
          onEvent: (event) => {
            if (event.type === 'tool_start' && event.data.toolName === 'wait') gate.open(1);
          },
          runInScope: (_scope, work) => work(),
        }),
      };
      const agent = defineAgent({
        name: 'research',
        model,
        tools: [lookup, gate.tool],
        codeMode: codeMode({ observationWindowMs: 300 }),
        telemetry: openOnWait,
      });
      const run = await agent.ask('Go', { runtime });
      expect(run.outcome).toBe('completed');

      const spans = tracing.finished();
      expect(spanTree(spans)).toEqual([
        'invoke_agent research',
        '  chat mock-model',
        '  execute_tool exec',
        '    execute_tool help_center_lookup',
        '    execute_tool gate',
        '    execute_tool help_center_lookup',
        '    execute_tool gate',
        '  chat mock-model',
        '  execute_tool wait',
        '    execute_tool help_center_lookup',
        '  chat mock-model',
      ]);
      const exec = onlySpan(spans, 'execute_tool exec');
      expect(exec.attributes['ghost.code_mode.program.status']).toBeUndefined();
      expect(exec.attributes['ghost.code_mode.program.source']).toBeUndefined();
      expect(onlySpan(spans, 'execute_tool wait').attributes).toMatchObject({
        'ghost.code_mode.engine': 'quickjs',
        'ghost.code_mode.sandbox': 'bwrap',
        'ghost.code_mode.program.status': 'completed',
      });
    },
  );

  it.skipIf(!detection.available)(
    `marks the control call that saw a program fail${unavailable}`,
    async () => {
      const { tracing, runtime } = setUp();
      const model = new ScriptedModel([
        {
          toolCalls: [{ id: 'exec_1', name: 'exec', input: { source: "throw new Error('no such topic')" } }],
        },
        { text: 'It failed.' },
      ]);
      const agent = defineAgent({ name: 'research', model, tools: [lookup], codeMode: codeMode() });
      const run = await agent.ask('Go', { runtime });
      expect(run.outcome).toBe('completed');
      const exec = onlySpan(tracing.finished(), 'execute_tool exec');
      expect(exec.attributes).toMatchObject({
        'ghost.code_mode.program.status': 'error',
        'error.type': 'CODE_MODE_PROGRAM_FAILED',
      });
      expect(exec.status.code).toBe(SpanStatusCode.ERROR);
      expect(exec.status.message).toContain('no such topic');
    },
  );

  it.skipIf(!detection.available)(
    `ends the exec span and its program's open calls when the run is cancelled mid-program${unavailable}`,
    async () => {
      const { tracing, runtime } = setUp();
      const gate = gateTool();
      const controller = new AbortController();
      void gate.started(0)?.then(() => controller.abort());
      const model = new ScriptedModel([
        { toolCalls: [{ id: 'exec_1', name: 'exec', input: { source: 'await tools.gate({})' } }] },
      ]);
      const agent = defineAgent({ name: 'research', model, tools: [gate.tool], codeMode: codeMode() });
      const run = await agent.ask('Go', { runtime, signal: controller.signal });
      expect(run.outcome).toBe('cancelled');

      const started = tracing.started();
      expect(started.filter((span) => !span.ended).map((span) => span.name)).toEqual([]);
      const spans = tracing.finished();
      expect(spans).toHaveLength(started.length);
      expect(spanTree(spans)).toEqual([
        'invoke_agent research',
        '  chat scripted-model',
        '  execute_tool exec',
        '    execute_tool gate',
      ]);
      for (const name of ['execute_tool exec', 'execute_tool gate', 'invoke_agent research']) {
        const span = onlySpan(spans, name);
        expect({ name, code: span.status.code, type: span.attributes['error.type'] }).toEqual({
          name,
          code: SpanStatusCode.ERROR,
          type: 'RUN_CANCELLED',
        });
      }
    },
  );
});
