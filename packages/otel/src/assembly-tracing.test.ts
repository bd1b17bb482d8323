import { defineWorkflow } from '@ghost/assemblies';
import { createRuntime, defineAgent } from '@ghost/core';
import { MockModel, ScriptedModel } from '@ghost/core/testing';
import { SpanStatusCode } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTelemetry } from './open-telemetry.js';
import { inMemoryTracing, onlySpan, spanTree, useAsyncContext } from './test-support/in-memory-tracing.js';

let stopAsyncContext: () => void;
beforeAll(() => {
  stopAsyncContext = useAsyncContext();
});
afterAll(() => stopAsyncContext());

function setUp() {
  const tracing = inMemoryTracing();
  const runtime = createRuntime({ telemetry: openTelemetry({ tracerProvider: tracing.provider }) });
  return { tracing, runtime };
}

describe('an assembly run traced', () => {
  it('makes a span per step, with its agent (and a nested assembly’s steps) beneath it', async () => {
    const { tracing, runtime } = setUp();
    const researcher = defineAgent({ name: 'researcher', model: new ScriptedModel([{ text: 'Facts.' }]) });
    const writer = defineAgent({ name: 'writer', model: new ScriptedModel([{ text: 'A piece.' }]) });
    const research = defineWorkflow({
      name: 'research',
      perform: async (ctx, topic) => (await ctx.invoke(researcher, topic)).response,
    });
    const pipeline = defineWorkflow({
      name: 'pipeline',
      async perform(ctx, topic) {
        const facts = await ctx.invoke(research, topic);
        return (await ctx.invoke(writer, facts.response)).response;
      },
    });
    const run = await pipeline.ask('Lisbon', { runtime });
    expect(run.outcome).toBe('completed');

    const spans = tracing.finished();
    expect(tracing.started().filter((span) => !span.ended)).toEqual([]);
    expect(spanTree(spans)).toEqual([
      'invoke_agent pipeline',
      '  assembly_step research',
      '    assembly_step researcher',
      '      invoke_agent researcher',
      '        chat scripted-model',
      '  assembly_step writer',
      '    invoke_agent writer',
      '      chat scripted-model',
    ]);
    expect(onlySpan(spans, 'assembly_step writer').attributes).toMatchObject({
      'ghost.assembly.name': 'pipeline',
      'ghost.assembly.step': 'writer',
      'ghost.assembly.step.attempt': 1,
      'gen_ai.agent.name': 'writer',
    });
    expect(onlySpan(spans, 'assembly_step researcher').attributes['ghost.assembly.name']).toBe('research');
  });

  it('marks a failed step and the run as errors, and ends every span', async () => {
    const { tracing, runtime } = setUp();
    const failing = defineAgent({
      name: 'checker',
      model: new MockModel({
        // biome-ignore lint/correctness/useYield: a model that fails before its first part
        stream: async function* () {
          throw new Error('connection reset');
        },
      }),
    });
    const pipeline = defineWorkflow({
      name: 'check',
      perform: async (ctx, input) => (await ctx.invoke(failing, input)).response,
    });
    const run = await pipeline.ask('Check it.', { runtime });
    expect(run.outcome).toBe('failed');
    const spans = tracing.finished();
    expect(tracing.started().filter((span) => !span.ended)).toEqual([]);
    const step = onlySpan(spans, 'assembly_step checker');
    expect(step.status.code).toBe(SpanStatusCode.ERROR);
    expect(step.status.message).toContain('connection reset');
    expect(onlySpan(spans, 'invoke_agent check').status.code).toBe(SpanStatusCode.ERROR);
  });
});
