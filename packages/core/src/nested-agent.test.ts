import { AsyncLocalStorage } from 'node:async_hooks';
import Type from 'typebox';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Agent, defineAgent } from './agent.js';
import { CleanupError } from './errors.js';
import type { ModelRequest, ModelStreamPart } from './model.js';
import { createRuntime } from './runtime.js';
import type { AgentStreamSource, NestedStreamEvent, StreamEvent, StreamEventOf } from './stream-event.js';
import type { TelemetryRunStart, TelemetryV1 } from './telemetry.js';
import { MockModel } from './testing/mock-model.js';
import { countOpenHandles, newOpenHandles } from './testing/open-handles.js';
import { ScriptedModel } from './testing/scripted-model.js';
import { defineTool } from './tool.js';
import type { ToolSource } from './tool-source.js';

const runtime = createRuntime();

// Every run, cancelled ones included, must leave no timer, socket or process behind.
let handlesBefore: Map<string, number>;
beforeEach(() => {
  handlesBefore = countOpenHandles();
});
afterEach(async () => {
  expect(await newOpenHandles(handlesBefore)).toEqual([]);
});

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

type AgentStreamEvent = StreamEventOf<'agent_stream'>;

function agentEvents(events: readonly StreamEvent[]): AgentStreamEvent[] {
  return events.filter((event): event is AgentStreamEvent => event.type === 'agent_stream');
}

/** The nested events of each invocation, in the order they came, keyed by invocation id. */
function byInvocation(events: readonly AgentStreamEvent[]): Map<string, NestedStreamEvent[]> {
  const groups = new Map<string, NestedStreamEvent[]>();
  for (const event of events) {
    const id = event.data.source.invocationId;
    groups.set(id, [...(groups.get(id) ?? []), event.data.event]);
  }
  return groups;
}

function toolResults(requests: readonly ModelRequest[], call: number) {
  return (requests[call]?.messages ?? []).filter((message) => message.role === 'tool');
}

/** A deferred promise. */
function deferred<Value = void>() {
  let resolve: (value: Value) => void = () => {};
  const promise = new Promise<Value>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}

/**
 * Hands turns out in a fixed order: `at(n)` waits until `n` turns have been taken, `done()` takes
 * one. Two models that stream through one turnstile interleave exactly as the test says.
 */
function turnstile() {
  let taken = 0;
  const waiting = new Map<number, () => void>();
  return {
    at(position: number): Promise<void> {
      if (taken >= position) return Promise.resolve();
      return new Promise((resolve) => waiting.set(position, resolve));
    },
    done(): void {
      taken += 1;
      waiting.get(taken)?.();
      waiting.delete(taken);
    },
  };
}

/** A model that streams `chunks`, each when its turn comes, then stops. */
function interleavedModel(gate: ReturnType<typeof turnstile>, chunks: readonly [number, string][]) {
  return new MockModel({
    stream: async function* () {
      for (const [position, text] of chunks) {
        await gate.at(position);
        yield { type: 'text-delta', text };
        gate.done();
      }
      yield { type: 'finish', reason: 'stop' };
    },
  });
}

/** A model that waits until its request is aborted, telling `started` when it is called. */
function hangingModel(started: () => void) {
  return new MockModel({
    stream: async function* (_request, options) {
      started();
      await new Promise((_resolve, reject) => {
        if (options.signal.aborted) reject(options.signal.reason);
        options.signal.addEventListener('abort', () => reject(options.signal.reason), { once: true });
      });
      yield { type: 'finish', reason: 'stop' };
    },
  });
}

function toolCallParts(id: string, name: string, input: unknown): ModelStreamPart[] {
  return [
    { type: 'tool-call-start', index: 0, id, name },
    { type: 'tool-call-delta', index: 0, argumentsDelta: JSON.stringify(input) },
    { type: 'tool-call-stop', index: 0 },
    { type: 'finish', reason: 'tool-calls' },
  ];
}

const nothing = defineTool({
  name: 'nothing',
  description: 'Does nothing.',
  input: Type.Object({}),
  execute: () => null,
});

describe('nested agent events', () => {
  it('streams parallel agents’ events interleaved, each in order and sourced, when asked for', async () => {
    const gate = turnstile();
    const alpha = defineAgent({
      name: 'alpha',
      model: interleavedModel(gate, [
        [0, 'a1'],
        [2, 'a2'],
        [4, 'a3'],
      ]),
    });
    const beta = defineAgent({
      name: 'beta',
      model: interleavedModel(gate, [
        [1, 'b1'],
        [3, 'b2'],
        [5, 'b3'],
      ]),
    });
    const lead = () =>
      defineAgent({
        name: 'lead',
        model: new ScriptedModel([
          {
            toolCalls: [
              { id: 'call_a', name: 'alpha', input: { input: 'task for alpha' } },
              { id: 'call_b', name: 'beta', input: { input: 'task for beta' } },
            ],
          },
          { text: 'a1a2a3 and b1b2b3' },
        ]),
        tools: [alpha.asTool(), beta.asTool()],
      });
    const stream = lead().streamAsk('go', { runtime, includeAgentEvents: true });
    const events = await collect(stream);
    const run = await stream.run;
    expect(run.outcome).toBe('completed');

    const nested = agentEvents(events);
    // Interleaved: each text chunk came when its turn did, whichever agent it was.
    const texts = nested.flatMap((event) =>
      event.data.event.type === 'text_delta'
        ? [`${event.data.source.agentName}:${event.data.event.data.text}`]
        : [],
    );
    expect(texts).toEqual(['alpha:a1', 'beta:b1', 'alpha:a2', 'beta:b2', 'alpha:a3', 'beta:b3']);
    // Each agent's events in its own order, from invocation_start to invocation_stop.
    const groups = byInvocation(nested);
    expect(groups.size).toBe(2);
    for (const group of groups.values()) {
      expect(group.map((event) => event.type)).toEqual([
        'invocation_start',
        'model_start',
        'text_delta',
        'text_delta',
        'text_delta',
        'model_stop',
        'invocation_stop',
      ]);
    }
    // Sourced: the tool call that ran the agent, its name and its invocation.
    const sources = new Map<string, AgentStreamSource>();
    for (const event of nested) sources.set(event.data.source.agentName, event.data.source);
    const alphaStart = [...groups.values()]
      .flat()
      .find((event) => event.type === 'invocation_start' && event.data.agentName === 'alpha');
    expect(alphaStart?.type === 'invocation_start' && alphaStart.data).toMatchObject({
      agentName: 'alpha',
      input: 'task for alpha',
      messages: [{ role: 'user', content: 'task for alpha' }],
    });
    const alphaSource = sources.get('alpha');
    expect(alphaSource).toEqual({
      path: ['tool:call_a', 'alpha', alphaSource?.invocationId],
      agentName: 'alpha',
      invocationId: alphaStart?.type === 'invocation_start' ? alphaStart.data.invocationId : 'missing',
      depth: 1,
    });
    expect(sources.get('beta')?.path).toEqual(['tool:call_b', 'beta', sources.get('beta')?.invocationId]);
    expect(sources.get('beta')?.invocationId).not.toBe(alphaSource?.invocationId);
    // Frozen copies, of this run.
    for (const event of nested) {
      expect(event.runId).toBe(run.operationId);
      expect(event.data.event.runId).toBe(run.operationId);
      expect(Object.isFrozen(event.data)).toBe(true);
      expect(Object.isFrozen(event.data.source.path)).toBe(true);
      expect(Object.isFrozen(event.data.event.data)).toBe(true);
    }
    if (alphaStart?.type === 'invocation_start')
      expect(Object.isFrozen(alphaStart.data.messages?.[0])).toBe(true);
    // The lead's own tool calls are there as always: each ends after its agent did.
    const stopOf = (toolCallId: string) =>
      events.findIndex((event) => event.type === 'tool_stop' && event.data.toolCallId === toolCallId);
    const lastOf = (agentName: string) =>
      events.findLastIndex(
        (event) => event.type === 'agent_stream' && event.data.source.agentName === agentName,
      );
    expect(stopOf('call_a')).toBeGreaterThan(lastOf('alpha'));
    expect(stopOf('call_b')).toBeGreaterThan(lastOf('beta'));
    expect(events.at(-1)?.type).toBe('run_stop');
  });

  it('streams only the run’s own events without includeAgentEvents: a nested agent is its tool call', async () => {
    const researcher = defineAgent({ name: 'researcher', model: new ScriptedModel([{ text: 'found it' }]) });
    const lead = defineAgent({
      name: 'lead',
      model: new ScriptedModel([
        { toolCalls: [{ id: 'c1', name: 'researcher', input: { input: 'dig' } }] },
        { text: 'done' },
      ]),
      tools: [researcher.asTool()],
    });
    const events = await collect(lead.streamAsk('go', { runtime }));
    expect(events.map((event) => event.type)).toEqual([
      'run_start',
      'invocation_start',
      'model_start',
      'tool_call_start',
      'tool_call_delta',
      'tool_call_stop',
      'model_stop',
      'tool_start',
      'tool_stop',
      'model_start',
      'text_delta',
      'model_stop',
      'invocation_stop',
      'run_stop',
    ]);
    const lastStop = events.find((event) => event.type === 'tool_stop');
    expect(lastStop?.type === 'tool_stop' && lastStop.data.content).toBe('found it');
  });

  it('sources agents nested deeper with their whole path, never wrapping an event twice', async () => {
    const fetcher = defineAgent({ name: 'fetcher', model: new ScriptedModel([{ text: 'page text' }]) });
    const researcher = defineAgent({
      name: 'researcher',
      model: new ScriptedModel([
        { toolCalls: [{ id: 'inner_call', name: 'fetcher', input: { input: 'fetch it' } }] },
        { text: 'summary' },
      ]),
      tools: [fetcher.asTool()],
    });
    const lead = defineAgent({
      name: 'lead',
      model: new ScriptedModel([
        { toolCalls: [{ id: 'outer_call', name: 'researcher', input: { input: 'research' } }] },
        { text: 'done' },
      ]),
      tools: [researcher.asTool()],
    });
    const events = await collect(lead.streamAsk('go', { runtime, includeAgentEvents: true }));
    const nested = agentEvents(events);
    expect(nested.every((event) => event.data.event.type !== ('agent_stream' as string))).toBe(true);
    const researcherSource = nested.find((event) => event.data.source.agentName === 'researcher')?.data
      .source;
    const fetcherSource = nested.find((event) => event.data.source.agentName === 'fetcher')?.data.source;
    expect(researcherSource?.depth).toBe(1);
    expect(fetcherSource?.depth).toBe(2);
    expect(fetcherSource?.path).toEqual([
      ...(researcherSource?.path ?? []),
      'tool:inner_call',
      'fetcher',
      fetcherSource?.invocationId,
    ]);
    // The researcher's call of the fetcher shows as its own tool call, inside its events.
    const researcherTypes = nested
      .filter((event) => event.data.source.agentName === 'researcher')
      .map((event) => event.data.event.type);
    expect(researcherTypes).toContain('tool_start');
    expect(researcherTypes).toContain('tool_stop');
    const fetcherText = nested.find(
      (event) => event.data.source.agentName === 'fetcher' && event.data.event.type === 'text_delta',
    );
    expect(fetcherText?.data.event.type === 'text_delta' && fetcherText.data.event.data.text).toBe(
      'page text',
    );
  });
});

describe('nested agents in their run', () => {
  it('adds every agent’s usage to the run’s', async () => {
    const alpha = defineAgent({
      name: 'alpha',
      model: new ScriptedModel([{ text: 'a', usage: { inputTokens: 5, outputTokens: 2 } }]),
    });
    const beta = defineAgent({
      name: 'beta',
      model: new ScriptedModel([
        { toolCalls: [{ name: 'nothing', input: {} }], usage: { inputTokens: 7, outputTokens: 3 } },
        { text: 'b', usage: { inputTokens: 11, outputTokens: 1, reasoningTokens: 4 } },
      ]),
      tools: [nothing],
    });
    const lead = defineAgent({
      name: 'lead',
      model: new ScriptedModel([
        {
          toolCalls: [
            { name: 'alpha', input: { input: 'x' } },
            { name: 'beta', input: { input: 'y' } },
          ],
          usage: { inputTokens: 100, outputTokens: 10 },
        },
        { text: 'done', usage: { inputTokens: 120, outputTokens: 5 } },
      ]),
      tools: [alpha.asTool(), beta.asTool()],
    });
    const run = await lead.ask('go', { runtime });
    expect(run.usage).toMatchObject({
      inputTokens: 100 + 120 + 5 + 7 + 11,
      outputTokens: 10 + 5 + 2 + 3 + 1,
      reasoningTokens: 4,
      totalTokens: 243 + 21,
    });
  });

  it('cancels the agent running nested when the run is cancelled, and closes what it opened before the run ends', async () => {
    const log: string[] = [];
    const source: ToolSource = {
      kind: 'tool-source',
      name: 'archive',
      async open({ run }) {
        log.push(`open for ${run.invocation.agentName}`);
        return {
          tools: [nothing],
          close: async () => {
            // A close that takes a while: the run's end must still wait for it.
            await new Promise((resolve) => setTimeout(resolve, 20));
            log.push('archive closed');
          },
        };
      },
    };
    const innerStarted = deferred();
    const researcher = defineAgent({
      name: 'researcher',
      model: hangingModel(() => innerStarted.resolve()),
      tools: [source],
    });
    const lead = defineAgent({
      name: 'lead',
      model: new ScriptedModel([{ toolCalls: [{ id: 'c1', name: 'researcher', input: { input: 'dig' } }] }]),
      tools: [researcher.asTool()],
    });
    const controller = new AbortController();
    const stream = lead.streamAsk('go', { runtime, signal: controller.signal, includeAgentEvents: true });
    void innerStarted.promise.then(() => controller.abort());
    const events: StreamEvent[] = [];
    for await (const event of stream) {
      if (event.type === 'run_cancel') log.push('run_cancel');
      events.push(event);
    }
    const run = await stream.run;

    expect(run.outcome).toBe('cancelled');
    expect(log).toEqual(['open for researcher', 'archive closed', 'run_cancel']);
    const innerEnd = agentEvents(events).at(-1)?.data.event;
    expect(innerEnd?.type).toBe('invocation_error');
    expect(innerEnd?.type === 'invocation_error' && innerEnd.data).toMatchObject({
      agentName: 'researcher',
      outcome: 'cancelled',
      error: { code: 'RUN_CANCELLED' },
    });
    // The lead's own invocation ended the same way, before the run's terminal event.
    expect(events.slice(-2).map((event) => event.type)).toEqual(['invocation_error', 'run_cancel']);
  });

  it('ends a nested agent at the run’s deadline, and the run keeps its own partial text', async () => {
    const researcher = defineAgent({ name: 'researcher', model: hangingModel(() => {}) });
    const lead = defineAgent({
      name: 'lead',
      model: new ScriptedModel([
        { text: 'Let me ask. ', toolCalls: [{ id: 'c1', name: 'researcher', input: { input: 'dig' } }] },
      ]),
      tools: [researcher.asTool()],
    });
    const stream = lead.streamAsk('go', { runtime, timeoutMs: 100, includeAgentEvents: true });
    const events = await collect(stream);
    const run = await stream.run;
    expect(run.outcome).toBe('partial');
    expect(run.response).toBe('Let me ask. ');
    const innerEnd = agentEvents(events).at(-1)?.data.event;
    expect(innerEnd?.type === 'invocation_error' && innerEnd.data).toMatchObject({
      outcome: 'partial',
      error: { code: 'RUN_DEADLINE_EXCEEDED' },
    });
  });

  it('closes what a nested agent opened when it ends, and fails the run when that cannot be closed', async () => {
    const log: string[] = [];
    const leaky: ToolSource = {
      kind: 'tool-source',
      name: 'leaky',
      async open() {
        return {
          tools: [nothing],
          close: async () => {
            log.push('leaky close');
            throw new Error('port still bound');
          },
        };
      },
    };
    const researcher = defineAgent({
      name: 'researcher',
      model: new ScriptedModel([{ text: 'found' }]),
      tools: [leaky],
    });
    const leadModel = new ScriptedModel([
      { toolCalls: [{ name: 'researcher', input: { input: 'dig' } }] },
      { text: 'done' },
    ]);
    const lead = defineAgent({ name: 'lead', model: leadModel, tools: [researcher.asTool()] });
    const stream = lead.streamAsk('go', { runtime });
    const events = await collect(stream);
    const failure = await stream.run.catch((error: unknown) => error);

    // Closed when the agent ended, before the lead read its answer.
    expect(log).toEqual(['leaky close']);
    expect(toolResults(leadModel.calls, 1)[0]?.content).toBe('found');
    expect(CleanupError.isInstance(failure)).toBe(true);
    expect((failure as Error).message).toMatch(
      /Agent 'researcher', run nested, could not close .*port still bound/,
    );
    expect(events.at(-1)).toMatchObject({ type: 'run_error', data: { cleanupFailed: true } });
  });

  it('counts a nested agent’s tool calls toward its own maxToolCalls and every agent’s above it', async () => {
    const fiveCalls = { toolCalls: Array.from({ length: 5 }, () => ({ name: 'nothing', input: {} })) };
    const frugalModel = new ScriptedModel([fiveCalls, { text: 'frugal done' }]);
    const frugal = defineAgent({
      name: 'frugal',
      model: frugalModel,
      tools: [nothing],
      limits: { maxToolCalls: 2 },
    });
    const generousModel = new ScriptedModel([fiveCalls, { text: 'generous done' }]);
    const generous = defineAgent({ name: 'generous', model: generousModel, tools: [nothing] });
    const lead = (agent: Agent) =>
      defineAgent({
        name: 'lead',
        limits: { maxToolCalls: 4 },
        model: new ScriptedModel([
          { toolCalls: [{ name: agent.name, input: { input: 'go' } }] },
          { text: 'done' },
        ]),
        tools: [agent.asTool()],
      });

    const ownLimit = await lead(frugal).ask('go', { runtime });
    expect(ownLimit.outcome).toBe('completed');
    const frugalResults = toolResults(frugalModel.calls, 1).map((message) => message.content);
    expect(frugalResults.filter((content) => content === '')).toHaveLength(2);
    expect(frugalResults.slice(2)).toEqual(
      Array(3).fill('This run reached its limit of 2 tool calls; answer with what you have.'),
    );
    // The lead's one call of the agent, and the agent's two.
    expect(ownLimit.result?.toolCalls).toBe(3);

    const leadLimit = await lead(generous).ask('go', { runtime });
    const generousResults = toolResults(generousModel.calls, 1).map((message) => message.content);
    expect(generousResults.filter((content) => content === '')).toHaveLength(3);
    expect(generousResults.slice(3)).toEqual(
      Array(2).fill(
        "Agent 'lead', which runs this one, reached its limit of 4 tool calls (its own and those of the agents it runs); answer with what you have.",
      ),
    );
    expect(leadLimit.result?.toolCalls).toBe(4);
  });
});

describe('nesting depth', () => {
  /** An agent that asks itself (through a tool source) until it is refused, then reports the refusal. */
  function matryoshka(limits: { maxDepth?: number } = {}): Agent {
    let calls = 0;
    const self: ToolSource = {
      kind: 'tool-source',
      name: 'self',
      open: async () => ({ tools: [agent.asTool()], close: async () => {} }),
    };
    const agent: Agent = defineAgent({
      name: 'matryoshka',
      limits,
      tools: [self],
      model: new MockModel({
        stream: (request) => {
          const last = request.messages.at(-1);
          calls += 1;
          if (last?.role !== 'tool') return toolCallParts(`call_${calls}`, 'matryoshka', { input: 'deeper' });
          return [
            { type: 'text-delta', text: last.isError === true ? `refused: ${last.content}` : last.content },
            { type: 'finish', reason: 'stop' },
          ];
        },
      }),
    });
    return agent;
  }

  it('lets agents nest 8 levels deep by default; the call that would go deeper fails with a tool error', async () => {
    const stream = matryoshka().streamAsk('go', { runtime, includeAgentEvents: true });
    const events = await collect(stream);
    const run = await stream.run;
    expect(run.outcome).toBe('completed');
    const starts = agentEvents(events).filter((event) => event.data.event.type === 'invocation_start');
    expect(starts.map((event) => event.data.source.depth)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(run.response).toBe(
      "refused: Agent 'matryoshka' did not answer: Agent 'matryoshka' cannot run here: it would be 9 levels deep, and agent 'matryoshka' lets agents nest at most 8 below it (limits.maxDepth). Answer without it, or raise that limit.",
    );
  });

  it('applies the tightest maxDepth of the agents above', async () => {
    const fetcher = defineAgent({ name: 'fetcher', model: new ScriptedModel([]) });
    const researcherModel = new ScriptedModel([
      { toolCalls: [{ name: 'fetcher', input: { input: 'fetch' } }] },
      { text: 'could not fetch' },
    ]);
    const researcher = defineAgent({ name: 'researcher', model: researcherModel, tools: [fetcher.asTool()] });
    const lead = defineAgent({
      name: 'lead',
      limits: { maxDepth: 1 },
      model: new ScriptedModel([
        { toolCalls: [{ name: 'researcher', input: { input: 'dig' } }] },
        { text: 'done' },
      ]),
      tools: [researcher.asTool()],
    });
    const stream = lead.streamAsk('go', { runtime, includeAgentEvents: true });
    const events = await collect(stream);
    expect((await stream.run).outcome).toBe('completed');
    expect(toolResults(researcherModel.calls, 1)[0]).toMatchObject({
      isError: true,
      content:
        "Agent 'fetcher' did not answer: Agent 'fetcher' cannot run here: it would be 2 levels deep, and agent 'lead' lets agents nest at most 1 below it (limits.maxDepth). Answer without it, or raise that limit.",
    });
    // The refused agent never started.
    expect(agentEvents(events).some((event) => event.data.source.agentName === 'fetcher')).toBe(false);
  });
});

describe('run.interject with a nested agent running', () => {
  it('goes to the run’s own agent, which reads it on its next turn; the nested agent never sees it', async () => {
    const innerStarted = deferred();
    const releaseInner = deferred();
    const researcherModel = new MockModel({
      stream: async function* () {
        innerStarted.resolve();
        await releaseInner.promise;
        yield { type: 'text-delta', text: 'found' };
        yield { type: 'finish', reason: 'stop' };
      },
    });
    const researcher = defineAgent({ name: 'researcher', model: researcherModel });
    const leadModel = new MockModel({
      stream: (request, _options, call) => {
        if (call === 0) return toolCallParts('c1', 'researcher', { input: 'dig' });
        const last = request.messages.at(-1);
        return [
          { type: 'text-delta', text: `noted: ${last?.role === 'user' ? last.content : 'nothing'}` },
          { type: 'finish', reason: 'stop' },
        ];
      },
    });
    const lead = defineAgent({ name: 'lead', model: leadModel, tools: [researcher.asTool()] });
    const run = lead.createRun('go', { runtime });
    const finished = run.execute();
    await innerStarted.promise;
    const reply = run.interject('also check order 7');
    releaseInner.resolve();
    expect(await reply).toBe('noted: also check order 7');
    await finished;
    expect(run.outcome).toBe('completed');
    expect(researcherModel.calls).toHaveLength(1);
    expect(JSON.stringify(researcherModel.calls[0]?.messages)).not.toContain('order 7');
    expect(leadModel.calls[1]?.messages.slice(-2)).toEqual([
      { role: 'tool', toolCallId: 'c1', toolName: 'researcher', content: 'found' },
      { role: 'user', content: 'also check order 7' },
    ]);
    await expect(run.interject('too late')).rejects.toThrow(/has finished/);
  });
});

describe('telemetry of nested agents', () => {
  it('starts an observation per nested agent, inside the scope of the tool call that runs it', async () => {
    const current = new AsyncLocalStorage<string>();
    const starts: { start: TelemetryRunStart; scope: string | undefined }[] = [];
    const eventsBy = new Map<string, string[]>();
    const plugin: TelemetryV1 = {
      specificationVersion: 'telemetry-v1',
      name: 'recording',
      startRun: (start) => {
        starts.push({ start, scope: current.getStore() });
        const seen: string[] = [];
        eventsBy.set(start.agentName, seen);
        return {
          onEvent: (event) => seen.push(event.type),
          runInScope: (scope, work) =>
            current.run(scope.kind === 'tool' ? `tool ${scope.toolCallId}` : scope.kind, work),
        };
      },
    };
    const researcher = defineAgent({
      name: 'researcher',
      model: new ScriptedModel([{ text: 'found' }]),
      telemetry: plugin,
    });
    const lead = defineAgent({
      name: 'lead',
      model: new ScriptedModel([
        { toolCalls: [{ id: 'c1', name: 'researcher', input: { input: 'dig' } }] },
        { text: 'done' },
      ]),
      tools: [researcher.asTool()],
    });
    const run = await lead.ask('go', {
      runtime: createRuntime({ telemetry: plugin }),
      includeAgentEvents: true,
    });
    expect(run.outcome).toBe('completed');
    // One plugin given twice (the runtime's and the agent's) observes the nested agent once.
    expect(starts.map(({ start }) => start.agentName)).toEqual(['lead', 'researcher']);
    expect(starts[0]?.start.source).toBeUndefined();
    expect(starts[1]?.scope).toBe('tool c1');
    expect(starts[1]?.start).toMatchObject({
      runId: run.operationId,
      agentName: 'researcher',
      invocation: { agentName: 'researcher', input: 'dig', runId: run.operationId },
      source: { agentName: 'researcher', depth: 1 },
    });
    expect(eventsBy.get('researcher')).toEqual([
      'invocation_start',
      'model_start',
      'text_delta',
      'model_stop',
      'invocation_stop',
    ]);
    // The run's observer sees the run's own events: the nested agent is its tool call.
    expect(eventsBy.get('lead')).not.toContain('agent_stream');
    expect(eventsBy.get('lead')?.filter((type) => type === 'invocation_start')).toHaveLength(1);
  });
});
