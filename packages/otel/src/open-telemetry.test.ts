import { setTimeout as sleep } from 'node:timers/promises';
import { createRuntime, defineAgent, defineTool, memorySessionStore, ToolError } from '@ghost/core';
import { ModelRateLimitError } from '@ghost/core/provider';
import { MockModel, ScriptedModel } from '@ghost/core/testing';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import Type from 'typebox';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { openTelemetry } from './open-telemetry.js';
import {
  childrenOf,
  type InMemoryTracing,
  inMemoryTracing,
  onlySpan,
  spanTree,
  useAsyncContext,
} from './test-support/in-memory-tracing.js';

let stopAsyncContext: () => void;
beforeAll(() => {
  stopAsyncContext = useAsyncContext();
});
afterAll(() => stopAsyncContext());
afterEach(() => {
  vi.unstubAllEnvs();
});

const contentAttributes = [
  'gen_ai.input.messages',
  'gen_ai.output.messages',
  'gen_ai.system_instructions',
  'gen_ai.tool.definitions',
  'gen_ai.tool.call.arguments',
  'gen_ai.tool.call.result',
  'ghost.code_mode.program.source',
];

const helpCenter: Record<string, string> = { refunds: 'Refunds take 5 business days.' };

const lookup = defineTool({
  name: 'help_center_lookup',
  description: 'Returns the help-center entry for a topic.',
  input: Type.Object({ topic: Type.String() }),
  execute: ({ topic }) => {
    const text = helpCenter[topic];
    if (!text) throw new ToolError(`No entry for '${topic}'. Known topics: refunds.`);
    return { topic, text };
  },
});

/** Waits until the run's signal aborts, as a slow tool that honours cancellation does. */
const waitForever = defineTool({
  name: 'wait_forever',
  description: 'Never finishes on its own.',
  input: Type.Object({}),
  execute: (_input, { signal }) =>
    new Promise((_resolve, reject) => {
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    }),
});

function setUp(options: { captureContent?: boolean } = {}) {
  const tracing = inMemoryTracing();
  const runtime = createRuntime({
    telemetry: openTelemetry({ tracerProvider: tracing.provider, ...options }),
  });
  return { tracing, runtime };
}

function expectAllEnded(tracing: InMemoryTracing): void {
  const started = tracing.started();
  expect(started.length).toBeGreaterThan(0);
  expect(started.filter((span) => !span.ended).map((span) => span.name)).toEqual([]);
  expect(tracing.finished()).toHaveLength(started.length);
}

function statusOf(span: ReadableSpan) {
  return { code: span.status.code, errorType: span.attributes['error.type'] };
}

describe('openTelemetry()', () => {
  it('traces a run as invoke_agent with a chat span per turn and an execute_tool span per call', async () => {
    const { tracing, runtime } = setUp();
    const model = new ScriptedModel([
      {
        toolCalls: [
          { id: 'call_refunds', name: 'help_center_lookup', input: { topic: 'refunds' } },
          { id: 'call_shipping', name: 'help_center_lookup', input: { topic: 'shipping' } },
        ],
      },
      { text: 'Refunds take 5 business days.' },
    ]);
    const agent = defineAgent({ name: 'support', model, tools: [lookup] });
    const run = await agent.ask('How long do refunds take?', { runtime });
    expect(run.outcome).toBe('completed');

    const spans = tracing.finished();
    expect(spanTree(spans)).toEqual([
      'invoke_agent support',
      '  chat scripted-model',
      '  execute_tool help_center_lookup',
      '  execute_tool help_center_lookup',
      '  chat scripted-model',
    ]);
    expectAllEnded(tracing);
    const agentSpan = onlySpan(spans, 'invoke_agent support');
    expect(agentSpan.kind).toBe(SpanKind.INTERNAL);
    expect(agentSpan.instrumentationScope.name).toBe('@ghost/otel');
    expect(agentSpan.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'support',
      'gen_ai.provider.name': 'scripted',
      'gen_ai.request.model': 'scripted-model',
      'ghost.run.id': run.operationId,
      'ghost.run.outcome': 'completed',
    });
    expect(agentSpan.status.code).toBe(SpanStatusCode.UNSET);
    expect(agentSpan.attributes['gen_ai.conversation.id']).toBeUndefined();

    const [firstChat, secondChat] = spans.filter((span) => span.name === 'chat scripted-model');
    expect(firstChat?.kind).toBe(SpanKind.CLIENT);
    expect(firstChat?.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'scripted',
      'gen_ai.request.model': 'scripted-model',
      'gen_ai.request.stream': true,
      'gen_ai.response.finish_reasons': ['tool_call'],
    });
    expect(secondChat?.attributes['gen_ai.response.finish_reasons']).toEqual(['stop']);

    const toolSpans = childrenOf(spans, agentSpan).filter((span) => span.name.startsWith('execute_tool'));
    const byCallId = new Map(toolSpans.map((span) => [span.attributes['gen_ai.tool.call.id'], span]));
    const refunds = byCallId.get('call_refunds');
    expect(refunds?.kind).toBe(SpanKind.INTERNAL);
    expect(refunds?.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'help_center_lookup',
      'gen_ai.tool.type': 'function',
    });
    expect(refunds?.status.code).toBe(SpanStatusCode.UNSET);
    // The tool's ToolError went back to the model; its span records the failure.
    const shipping = byCallId.get('call_shipping');
    expect(statusOf(shipping!)).toEqual({ code: SpanStatusCode.ERROR, errorType: 'TOOL_ERROR' });
    expect(shipping?.status.message).toBe("No entry for 'shipping'. Known topics: refunds.");
    for (const span of spans) {
      for (const name of contentAttributes) expect(span.attributes[name]).toBeUndefined();
    }
  });

  it('records usage per turn on chat spans and the totals on the run, with the request settings and retries', async () => {
    const { tracing, runtime } = setUp();
    const model = new ScriptedModel([
      {
        toolCalls: [{ name: 'help_center_lookup', input: { topic: 'refunds' } }],
        usage: { inputTokens: 100, outputTokens: 20, cacheReadTokens: 60 },
        retries: [{ error: new ModelRateLimitError('Slow down.'), delayMs: 250 }],
      },
      { text: 'Five days.', usage: { inputTokens: 150, outputTokens: 30, reasoningTokens: 10 } },
    ]);
    const agent = defineAgent({
      name: 'support',
      model,
      tools: [lookup],
      modelSettings: { temperature: 0.2, topP: 0.9, maxOutputTokens: 500, stopSequences: ['END'], seed: 7 },
    });
    const run = await agent.ask('How long do refunds take?', {
      runtime,
      metadata: { conversationId: 'thread-42' },
    });
    expect(run.outcome).toBe('completed');

    const spans = tracing.finished();
    const [first, second] = spans.filter((span) => span.name === 'chat scripted-model');
    expect(first?.attributes).toMatchObject({
      'gen_ai.usage.input_tokens': 100,
      'gen_ai.usage.output_tokens': 20,
      'gen_ai.usage.cache_read.input_tokens': 60,
      'gen_ai.request.temperature': 0.2,
      'gen_ai.request.top_p': 0.9,
      'gen_ai.request.max_tokens': 500,
      'gen_ai.request.stop_sequences': ['END'],
      'gen_ai.request.seed': 7,
      'gen_ai.conversation.id': 'thread-42',
    });
    // Counts the provider did not report are left out, never 0.
    expect(first?.attributes['gen_ai.usage.cache_creation.input_tokens']).toBeUndefined();
    expect(first?.attributes['gen_ai.usage.reasoning.output_tokens']).toBeUndefined();
    expect(first?.attributes['gen_ai.response.time_to_first_chunk']).toBeGreaterThanOrEqual(0);
    expect(second?.attributes).toMatchObject({
      'gen_ai.usage.input_tokens': 150,
      'gen_ai.usage.output_tokens': 30,
      'gen_ai.usage.reasoning.output_tokens': 10,
    });
    expect(first?.events.map((event) => ({ name: event.name, attributes: event.attributes }))).toEqual([
      {
        name: 'ghost.model.retry',
        attributes: {
          'ghost.model.retry.attempt': 2,
          'ghost.model.retry.delay_ms': 250,
          'error.type': 'MODEL_RATE_LIMITED',
          'error.message': 'Slow down.',
        },
      },
    ]);

    const agentSpan = onlySpan(spans, 'invoke_agent support');
    expect(agentSpan.attributes).toMatchObject({
      'gen_ai.usage.input_tokens': 250,
      'gen_ai.usage.output_tokens': 50,
      'gen_ai.usage.cache_read.input_tokens': 60,
      'gen_ai.usage.reasoning.output_tokens': 10,
      'gen_ai.conversation.id': 'thread-42',
    });
    expect(agentSpan.attributes['gen_ai.usage.cache_creation.input_tokens']).toBeUndefined();
  });

  it("records the response's id and model, and names well-known providers as the conventions do", async () => {
    const { tracing, runtime } = setUp();
    const model = new MockModel({
      provider: 'openai-chat',
      modelId: 'gpt-5.1',
      stream: () => [
        { type: 'response-metadata', id: 'chatcmpl-123', modelId: 'gpt-5.1-2026-11-13' },
        { type: 'text-delta', text: 'Hello.' },
        { type: 'usage', usage: { inputTokens: 12, outputTokens: 3, cacheWriteTokens: 8 } },
        { type: 'finish', reason: 'other', rawReason: 'pause_turn' },
      ],
    });
    const run = await defineAgent({ name: 'greeter', model }).ask('Hi', { runtime });
    expect(run.outcome).toBe('completed');

    const spans = tracing.finished();
    expect(spanTree(spans)).toEqual(['invoke_agent greeter', '  chat gpt-5.1']);
    expect(onlySpan(spans, 'chat gpt-5.1').attributes).toMatchObject({
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-5.1',
      'gen_ai.response.id': 'chatcmpl-123',
      'gen_ai.response.model': 'gpt-5.1-2026-11-13',
      'gen_ai.response.finish_reasons': ['pause_turn'],
      'gen_ai.usage.cache_creation.input_tokens': 8,
    });
    expect(onlySpan(spans, 'invoke_agent greeter').attributes['gen_ai.provider.name']).toBe('openai');
  });

  it('marks a failed run and the model call that failed it, with error.type, and ends every span', async () => {
    const { tracing, runtime } = setUp();
    const model = new MockModel({
      stream: () => {
        throw new ModelRateLimitError('Quota exhausted.', { isRetryable: false });
      },
    });
    const run = await defineAgent({ name: 'support', model }).ask('Hi', { runtime });
    expect(run.outcome).toBe('failed');

    const spans = tracing.finished();
    expectAllEnded(tracing);
    expect(spanTree(spans)).toEqual(['invoke_agent support', '  chat mock-model']);
    const agentSpan = onlySpan(spans, 'invoke_agent support');
    expect(statusOf(agentSpan)).toEqual({ code: SpanStatusCode.ERROR, errorType: 'MODEL_RATE_LIMITED' });
    expect(agentSpan.status.message).toBe('Quota exhausted.');
    expect(agentSpan.attributes['ghost.run.outcome']).toBe('failed');
    expect(statusOf(onlySpan(spans, 'chat mock-model'))).toEqual({
      code: SpanStatusCode.ERROR,
      errorType: 'MODEL_RATE_LIMITED',
    });
  });

  it('ends the spans of a run cancelled mid-tool as errors of type RUN_CANCELLED', async () => {
    const { tracing, runtime } = setUp();
    const controller = new AbortController();
    const started = defineTool({
      name: 'announce',
      description: 'Cancels the run from inside, then waits.',
      input: Type.Object({}),
      execute: async (_input, { signal }) => {
        setTimeout(() => controller.abort(), 10);
        await new Promise((_resolve, reject) => {
          signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        });
      },
    });
    const model = new ScriptedModel([{ toolCalls: [{ name: 'announce', input: {} }] }]);
    const run = await defineAgent({ name: 'support', model, tools: [started] }).ask('Go', {
      runtime,
      signal: controller.signal,
    });
    expect(run.outcome).toBe('cancelled');

    const spans = tracing.finished();
    expectAllEnded(tracing);
    expect(spanTree(spans)).toEqual([
      'invoke_agent support',
      '  chat scripted-model',
      '  execute_tool announce',
    ]);
    expect(statusOf(onlySpan(spans, 'execute_tool announce'))).toEqual({
      code: SpanStatusCode.ERROR,
      errorType: 'RUN_CANCELLED',
    });
    const agentSpan = onlySpan(spans, 'invoke_agent support');
    expect(statusOf(agentSpan)).toEqual({ code: SpanStatusCode.ERROR, errorType: 'RUN_CANCELLED' });
    expect(agentSpan.attributes['ghost.run.outcome']).toBe('cancelled');
    // The chat span had ended normally before the tool ran.
    expect(onlySpan(spans, 'chat scripted-model').status.code).toBe(SpanStatusCode.UNSET);
  });

  it('shows a run that reached its deadline as partial, with RUN_DEADLINE_EXCEEDED on what it cut short', async () => {
    const { tracing, runtime } = setUp();
    const model = new ScriptedModel([
      { text: 'Working on it.', toolCalls: [{ name: 'wait_forever', input: {} }] },
    ]);
    const run = await defineAgent({ name: 'support', model, tools: [waitForever] }).ask('Go', {
      runtime,
      timeoutMs: 200,
    });
    expect(run.outcome).toBe('partial');

    const spans = tracing.finished();
    expectAllEnded(tracing);
    expect(statusOf(onlySpan(spans, 'execute_tool wait_forever'))).toEqual({
      code: SpanStatusCode.ERROR,
      errorType: 'RUN_DEADLINE_EXCEEDED',
    });
    const agentSpan = onlySpan(spans, 'invoke_agent support');
    expect(statusOf(agentSpan)).toEqual({ code: SpanStatusCode.ERROR, errorType: 'RUN_DEADLINE_EXCEEDED' });
    expect(agentSpan.attributes['ghost.run.outcome']).toBe('partial');
  });

  it('records instructions, messages, tool arguments and results when content capture is on', async () => {
    const { tracing, runtime } = setUp({ captureContent: true });
    const model = new ScriptedModel([
      {
        reasoning: 'Look it up.',
        text: 'Checking.',
        toolCalls: [{ id: 'call_1', name: 'help_center_lookup', input: { topic: 'refunds' } }],
      },
      { text: 'Refunds take 5 business days.' },
    ]);
    const agent = defineAgent({
      name: 'support',
      instructions: 'Answer from the help center.',
      model,
      tools: [lookup],
    });
    const run = await agent.ask('How long do refunds take?', { runtime });
    expect(run.outcome).toBe('completed');

    const spans = tracing.finished();
    const [first, second] = spans.filter((span) => span.name === 'chat scripted-model');
    const json = (span: ReadableSpan | undefined, name: string) => JSON.parse(String(span?.attributes[name]));
    expect(json(first, 'gen_ai.system_instructions')).toEqual([
      { type: 'text', content: 'Answer from the help center.' },
    ]);
    expect(json(first, 'gen_ai.input.messages')).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'How long do refunds take?' }] },
    ]);
    expect(json(first, 'gen_ai.tool.definitions')).toEqual([
      {
        type: 'function',
        name: 'help_center_lookup',
        description: 'Returns the help-center entry for a topic.',
        parameters: expect.objectContaining({ type: 'object' }),
      },
    ]);
    expect(json(first, 'gen_ai.output.messages')).toEqual([
      {
        role: 'assistant',
        parts: [
          { type: 'reasoning', content: 'Look it up.' },
          { type: 'text', content: 'Checking.' },
          { type: 'tool_call', id: 'call_1', name: 'help_center_lookup', arguments: { topic: 'refunds' } },
        ],
        finish_reason: 'tool_call',
      },
    ]);
    expect(json(second, 'gen_ai.input.messages')).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'How long do refunds take?' }] },
      {
        role: 'assistant',
        parts: [
          { type: 'reasoning', content: 'Look it up.' },
          { type: 'text', content: 'Checking.' },
          { type: 'tool_call', id: 'call_1', name: 'help_center_lookup', arguments: { topic: 'refunds' } },
        ],
      },
      {
        role: 'tool',
        parts: [
          {
            type: 'tool_call_response',
            id: 'call_1',
            response: { topic: 'refunds', text: 'Refunds take 5 business days.' },
          },
        ],
      },
    ]);
    expect(json(second, 'gen_ai.output.messages')).toEqual([
      {
        role: 'assistant',
        parts: [{ type: 'text', content: 'Refunds take 5 business days.' }],
        finish_reason: 'stop',
      },
    ]);
    const tool = onlySpan(spans, 'execute_tool help_center_lookup');
    expect(json(tool, 'gen_ai.tool.call.arguments')).toEqual({ topic: 'refunds' });
    expect(json(tool, 'gen_ai.tool.call.result')).toEqual({
      topic: 'refunds',
      text: 'Refunds take 5 business days.',
    });
  });

  it('takes content capture from OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT unless the option says', async () => {
    vi.stubEnv('OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT', 'true');
    const fromEnvironment = setUp();
    const overridden = setUp({ captureContent: false });
    for (const { runtime } of [fromEnvironment, overridden]) {
      const model = new ScriptedModel([{ text: 'Hello.' }]);
      await defineAgent({ name: 'greeter', model }).ask('Hi', { runtime });
    }
    const chatOf = (tracing: InMemoryTracing) => onlySpan(tracing.finished(), 'chat scripted-model');
    expect(chatOf(fromEnvironment.tracing).attributes['gen_ai.input.messages']).toBeTypeOf('string');
    expect(chatOf(overridden.tracing).attributes['gen_ai.input.messages']).toBeUndefined();
  });

  it("makes the tool call's span current while it executes, so the tool's own spans nest beneath it", async () => {
    const { tracing, runtime } = setUp();
    const appTracer = tracing.provider.getTracer('weather-app');
    const forecast = defineTool({
      name: 'forecast',
      description: 'The forecast for a city.',
      input: Type.Object({ city: Type.String() }),
      execute: async ({ city }) => {
        await sleep(5); // the context must survive async work
        return appTracer.startActiveSpan('GET /forecast', async (span) => {
          await sleep(1);
          span.end();
          return { city, sky: 'sun' };
        });
      },
    });
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'forecast', input: { city: 'Oslo' } }] },
      { text: 'Sunny.' },
    ]);
    const run = await defineAgent({ name: 'weather', model, tools: [forecast] }).ask('Oslo?', { runtime });
    expect(run.outcome).toBe('completed');

    const spans = tracing.finished();
    expect(spanTree(spans)).toEqual([
      'invoke_agent weather',
      '  chat scripted-model',
      '  execute_tool forecast',
      '    GET /forecast',
      '  chat scripted-model',
    ]);
  });

  it("nests a nested agent's run under the tool call that started it", async () => {
    const { tracing, runtime } = setUp();
    const expert = defineAgent({ name: 'expert', model: new ScriptedModel([{ text: 'Use the blue one.' }]) });
    const askExpert = defineTool({
      name: 'ask_expert',
      description: 'Asks the expert agent.',
      input: Type.Object({ question: Type.String() }),
      execute: async ({ question }) => (await expert.ask(question, { runtime })).response,
    });
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'ask_expert', input: { question: 'Which cable?' } }] },
      { text: 'The blue one.' },
    ]);
    const run = await defineAgent({ name: 'support', model, tools: [askExpert] }).ask('Which cable?', {
      runtime,
    });
    expect(run.outcome).toBe('completed');

    const spans = tracing.finished();
    expect(spanTree(spans)).toEqual([
      'invoke_agent support',
      '  chat scripted-model',
      '  execute_tool ask_expert',
      '    invoke_agent expert',
      '      chat scripted-model',
      '  chat scripted-model',
    ]);
    const traceIds = new Set(spans.map((span) => span.spanContext().traceId));
    expect(traceIds.size).toBe(1);
    expectAllEnded(tracing);
  });

  it('traces an agent run as a tool (asTool) as invoke_agent under the execute_tool span that ran it', async () => {
    const { tracing, runtime } = setUp();
    const researcher = defineAgent({
      name: 'researcher',
      model: new ScriptedModel([
        {
          toolCalls: [{ name: 'help_center_lookup', input: { topic: 'refunds' } }],
          usage: { inputTokens: 4 },
        },
        { text: 'Five business days.', usage: { inputTokens: 6, outputTokens: 3 } },
      ]),
      tools: [lookup],
    });
    const checker = defineAgent({ name: 'checker', model: new ScriptedModel([{ text: 'Looks right.' }]) });
    const model = new ScriptedModel([
      {
        toolCalls: [
          { id: 'call_research', name: 'researcher', input: { input: 'How long do refunds take?' } },
          { id: 'call_check', name: 'checker', input: { input: 'Is five days right?' } },
        ],
      },
      { text: 'Refunds take five business days.' },
    ]);
    const run = await defineAgent({
      name: 'support',
      model,
      tools: [researcher.asTool(), checker.asTool()],
      limits: { maxParallelToolCalls: 1 }, // one after the other, so the tree has one order
    }).ask('Refunds?', { runtime });
    expect(run.outcome).toBe('completed');

    const spans = tracing.finished();
    expectAllEnded(tracing);
    expect(spanTree(spans)).toEqual([
      'invoke_agent support',
      '  chat scripted-model',
      '  execute_tool researcher',
      '    invoke_agent researcher',
      '      chat scripted-model',
      '      execute_tool help_center_lookup',
      '      chat scripted-model',
      '  execute_tool checker',
      '    invoke_agent checker',
      '      chat scripted-model',
      '  chat scripted-model',
    ]);
    expect(new Set(spans.map((span) => span.spanContext().traceId)).size).toBe(1);
    const researcherSpan = onlySpan(spans, 'invoke_agent researcher');
    expect(childrenOf(spans, researcherSpan).length).toBe(3);
    expect(researcherSpan.parentSpanContext?.spanId).toBe(
      spans.find((span) => span.attributes['gen_ai.tool.call.id'] === 'call_research')?.spanContext().spanId,
    );
    expect(researcherSpan.attributes).toMatchObject({
      'gen_ai.agent.name': 'researcher',
      'ghost.run.id': run.operationId,
      'ghost.run.outcome': 'completed',
      'gen_ai.usage.input_tokens': 10,
      'gen_ai.usage.output_tokens': 3,
    });
    // The run's span counts every agent's tokens.
    expect(onlySpan(spans, 'invoke_agent support').attributes['gen_ai.usage.input_tokens']).toBe(10);
  });

  it('marks a nested agent that did not answer, and the tool call that ran it, as errors', async () => {
    const { tracing, runtime } = setUp();
    const researcher = defineAgent({
      name: 'researcher',
      model: new MockModel({
        stream: () => {
          throw new ModelRateLimitError('Quota exhausted.', { isRetryable: false });
        },
      }),
    });
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'researcher', input: { input: 'dig' } }] },
      { text: 'I will answer myself.' },
    ]);
    const run = await defineAgent({ name: 'support', model, tools: [researcher.asTool()] }).ask('Hi', {
      runtime,
    });
    expect(run.outcome).toBe('completed');

    const spans = tracing.finished();
    expectAllEnded(tracing);
    const researcherSpan = onlySpan(spans, 'invoke_agent researcher');
    expect(statusOf(researcherSpan)).toEqual({ code: SpanStatusCode.ERROR, errorType: 'MODEL_RATE_LIMITED' });
    expect(researcherSpan.attributes['ghost.run.outcome']).toBe('failed');
    expect(statusOf(onlySpan(spans, 'execute_tool researcher'))).toEqual({
      code: SpanStatusCode.ERROR,
      errorType: 'AGENT_TOOL_FAILED',
    });
    expect(statusOf(onlySpan(spans, 'invoke_agent support')).code).toBe(SpanStatusCode.UNSET);
  });

  it('nests the run under the span current where it starts', async () => {
    const { tracing, runtime } = setUp();
    const appTracer = tracing.provider.getTracer('http-server');
    await appTracer.startActiveSpan('POST /chat', async (request) => {
      await defineAgent({ name: 'support', model: new ScriptedModel([{ text: 'Hi.' }]) }).ask('Hi', {
        runtime,
      });
      request.end();
    });
    expect(spanTree(tracing.finished())).toEqual([
      'POST /chat',
      '  invoke_agent support',
      '    chat scripted-model',
    ]);
  });

  it('rejects options it does not know, with a ConfigurationError', () => {
    const { provider } = inMemoryTracing();
    expect(() => openTelemetry({ capture: true } as never)).toThrow(
      "openTelemetry() has no option 'capture'. Its options are: tracer, tracerProvider, captureContent.",
    );
    expect(() => openTelemetry({ tracer: provider.getTracer('a'), tracerProvider: provider })).toThrow(
      /a tracer or a tracerProvider, not both/,
    );
    expect(() => openTelemetry({ tracerProvider: {} as never })).toThrow(
      /must be an OpenTelemetry TracerProvider/,
    );
    expect(() => openTelemetry({ captureContent: 'yes' as never })).toThrow(
      /captureContent must be true or false/,
    );
    try {
      openTelemetry({ tracer: 'tracer' as never });
      expect.unreachable();
    } catch (error) {
      expect(error).toMatchObject({ name: 'ConfigurationError', code: 'OTEL_OPTION_INVALID' });
    }
  });

  it('uses the tracer it is given', async () => {
    const tracing = inMemoryTracing();
    const tracer = tracing.provider.getTracer('my-app', '1.2.3');
    const agent = defineAgent({
      name: 'greeter',
      model: new ScriptedModel([{ text: 'Hello.' }]),
      telemetry: openTelemetry({ tracer }),
    });
    await agent.ask('Hi', { runtime: createRuntime() });
    const agentSpan = onlySpan(tracing.finished(), 'invoke_agent greeter');
    expect(agentSpan.instrumentationScope).toMatchObject({ name: 'my-app', version: '1.2.3' });
  });
});

describe('openTelemetry() with sessions', () => {
  it('names the session as gen_ai.conversation.id on the run and its model calls', async () => {
    const tracing = inMemoryTracing();
    const runtime = createRuntime({
      telemetry: openTelemetry({ tracerProvider: tracing.provider }),
      sessionStore: memorySessionStore(),
    });
    const agent = defineAgent({ name: 'support', model: new ScriptedModel([{ text: 'Hi.' }]) });
    const run = await agent.ask('Hello', { runtime, session: { id: 'chat-7', actor: 'user-1' } });
    expect(run.outcome).toBe('completed');
    const spans = tracing.finished();
    expect(onlySpan(spans, 'invoke_agent support').attributes['gen_ai.conversation.id']).toBe('chat-7');
    expect(onlySpan(spans, 'chat scripted-model').attributes['gen_ai.conversation.id']).toBe('chat-7');
  });
});
