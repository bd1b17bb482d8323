import Type from 'typebox';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defineAgent } from './agent.js';
import { ConfigurationError } from './errors.js';
import { memorySessionStore } from './memory-session-store.js';
import type { ModelMessage, ModelRequest, ModelStreamPart } from './model.js';
import { createRuntime } from './runtime.js';
import type { StreamEvent, SubagentEventData } from './stream-event.js';
import { MockModel } from './testing/mock-model.js';
import { countOpenHandles, newOpenHandles } from './testing/open-handles.js';
import { ScriptedModel, type ScriptedStep } from './testing/scripted-model.js';
import { defineTool } from './tool.js';

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

function subagentEvents(events: readonly StreamEvent[]): SubagentEventData[] {
  return events.flatMap((event) => (event.type === 'subagent' ? [event.data] : []));
}

/** The results of the latest tool calls the model read in its `call`-th request, parsed, with whether each was an error. */
function toolResults(requests: readonly ModelRequest[], call: number) {
  const messages = requests[call]?.messages ?? [];
  const latest = messages.slice(messages.findLastIndex((message) => message.role === 'assistant') + 1);
  return latest.flatMap((message) =>
    message.role === 'tool'
      ? [{ name: message.toolName, isError: message.isError === true, content: parse(message.content) }]
      : [],
  );
}

function parse(content: string): unknown {
  try {
    return JSON.parse(content);
  } catch {
    return content;
  }
}

function spawn(input: Record<string, unknown>, id?: string): ScriptedStep {
  return { toolCalls: [{ name: 'spawn_subagent', input, ...(id ? { id } : {}) }] };
}

/** A model that waits until its request is aborted. */
function blockingModel(): MockModel {
  return new MockModel({
    stream: async function* (_request, options) {
      await new Promise((_resolve, reject) => {
        if (options.signal.aborted) reject(options.signal.reason);
        options.signal.addEventListener('abort', () => reject(options.signal.reason), { once: true });
      });
      yield { type: 'finish', reason: 'stop' };
    },
  });
}

function deferred() {
  let resolve: () => void = () => {};
  const promise = new Promise<void>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}

function userTexts(messages: readonly ModelMessage[]): string[] {
  return messages.flatMap((message) => (message.role === 'user' ? [String(message.content)] : []));
}

describe('subagents', () => {
  it('gives the model the five control tools, describing each kind', async () => {
    const researcher = defineAgent({ name: 'researcher', model: new ScriptedModel([]) });
    const model = new ScriptedModel([{ text: 'ok' }]);
    const lead = defineAgent({
      name: 'lead',
      model,
      subagents: [{ agent: researcher, description: 'Finds sources.' }],
    });
    await lead.ask('hi', { runtime });
    const tools = model.calls[0]?.tools ?? [];
    expect(tools.map((tool) => tool.name)).toEqual([
      'spawn_subagent',
      'send_message_to_subagent',
      'interject_subagent',
      'wait_for_subagents',
      'list_subagents',
    ]);
    expect(tools[0]?.description).toContain('- researcher: Finds sources.');
  });

  it('runs a sync subagent and returns its first answer to the spawn call, with events and usage', async () => {
    const childModel = new ScriptedModel([{ text: 'Lisbon was founded by...', usage: { inputTokens: 5 } }]);
    const researcher = defineAgent({ name: 'researcher', model: childModel });
    const model = new ScriptedModel([
      spawn({ kind: 'researcher', task_name: 'history', task: 'History of Lisbon', mode: 'sync' }),
      { text: 'Done.', usage: { inputTokens: 1 } },
    ]);
    const lead = defineAgent({
      name: 'lead',
      model,
      subagents: [{ agent: researcher, description: 'Finds sources.' }],
    });
    const stream = lead.streamAsk('Tell me about Lisbon', { runtime });
    const events = await collect(stream);
    const run = await stream.run;
    expect(run.response).toBe('Done.');
    expect(toolResults(model.calls, 1)).toEqual([
      {
        name: 'spawn_subagent',
        isError: false,
        content: expect.objectContaining({
          subagent_id: 'history',
          kind: 'researcher',
          status: 'idle',
          turns: 1,
          response: 'Lisbon was founded by...',
        }),
      },
    ]);
    expect(userTexts(childModel.calls[0]?.messages ?? [])).toEqual(['History of Lisbon']);
    expect(subagentEvents(events).map((event) => event.phase)).toEqual([
      'spawned',
      'turn_started',
      'turn_finished',
    ]);
    expect(subagentEvents(events)[2]).toMatchObject({
      subagentId: 'history',
      kind: 'researcher',
      turn: 1,
      response: 'Lisbon was founded by...',
    });
    expect(Object.isFrozen(subagentEvents(events)[0])).toBe(true);
    expect(run.usage.inputTokens).toBe(6);
  });

  it('runs async subagents in the background; wait_for_subagents returns their answers', async () => {
    const researcher = defineAgent({
      name: 'researcher',
      model: new MockModel({
        stream: (request) => [
          { type: 'text-delta', text: `answer to ${String(request.messages.at(-1)?.content)}` },
          { type: 'finish', reason: 'stop' },
        ],
      }),
    });
    const model = new ScriptedModel([
      {
        toolCalls: [
          {
            name: 'spawn_subagent',
            input: { kind: 'researcher', task_name: 'a', task: 'task A', mode: 'async' },
          },
          {
            name: 'spawn_subagent',
            input: { kind: 'researcher', task_name: 'b', task: 'task B', mode: 'async' },
          },
        ],
      },
      { toolCalls: [{ name: 'wait_for_subagents', input: {} }] },
      { text: 'Both done.' },
    ]);
    const lead = defineAgent({
      name: 'lead',
      model,
      subagents: [{ agent: researcher, description: 'Finds sources.' }],
    });
    const run = await lead.ask('go', { runtime });
    expect(run.response).toBe('Both done.');
    expect(toolResults(model.calls, 1).map((result) => result.content)).toEqual([
      expect.objectContaining({ subagent_id: 'a' }),
      expect.objectContaining({ subagent_id: 'b' }),
    ]);
    expect(toolResults(model.calls, 2)[0]?.content).toEqual({
      status: 'done',
      subagents: [
        expect.objectContaining({ subagent_id: 'a', status: 'idle', response: 'answer to task A' }),
        expect.objectContaining({ subagent_id: 'b', status: 'idle', response: 'answer to task B' }),
      ],
    });
  });

  it('answers follow-up messages in order, each turn continuing the conversation', async () => {
    const childModel = new MockModel({
      stream: (request) => [
        { type: 'text-delta', text: `re: ${String(request.messages.at(-1)?.content)}` },
        { type: 'finish', reason: 'stop' },
      ],
    });
    const researcher = defineAgent({ name: 'researcher', model: childModel });
    const model = new ScriptedModel([
      spawn({ kind: 'researcher', task_name: 'notes', task: 'first', mode: 'sync' }),
      {
        toolCalls: [
          { name: 'send_message_to_subagent', input: { subagent_id: 'notes', message: 'second' } },
          { name: 'send_message_to_subagent', input: { subagent_id: 'notes', message: 'third' } },
        ],
      },
      { toolCalls: [{ name: 'wait_for_subagents', input: { subagent_ids: ['notes'] } }] },
      { text: 'ok' },
    ]);
    const lead = defineAgent({
      name: 'lead',
      model,
      subagents: [{ agent: researcher, description: 'Takes notes.' }],
    });
    const stream = lead.streamAsk('go', { runtime });
    const events = await collect(stream);
    expect((await stream.run).completed).toBe(true);
    expect(childModel.calls.map((request) => userTexts(request.messages))).toEqual([
      ['first'],
      ['first', 'second'],
      ['first', 'second', 'third'],
    ]);
    expect(toolResults(model.calls, 3)[0]?.content).toEqual({
      status: 'done',
      subagents: [
        expect.objectContaining({ turns: 3, response: 're: third', previous_response: 're: second' }),
      ],
    });
    expect(subagentEvents(events).map((event) => event.phase)).toEqual([
      'spawned',
      'turn_started',
      'turn_finished',
      'message_queued',
      'turn_started',
      'message_queued',
      'turn_finished',
      'turn_started',
      'turn_finished',
    ]);
  });

  it('answers bad requests with tool errors the model reads, and the run goes on', async () => {
    const researcher = defineAgent({ name: 'researcher', model: new ScriptedModel([{ text: 'hi' }]) });
    const model = new ScriptedModel([
      spawn({ kind: 'researcher', task_name: 'ok_name', task: 'work', mode: 'sync' }),
      {
        toolCalls: [
          { name: 'spawn_subagent', input: { kind: 'nope', task_name: 'x', task: 't', mode: 'sync' } },
          {
            name: 'spawn_subagent',
            input: { kind: 'researcher', task_name: 'Bad-Name', task: 't', mode: 'sync' },
          },
          {
            name: 'spawn_subagent',
            input: { kind: 'researcher', task_name: 'a'.repeat(41), task: 't', mode: 'sync' },
          },
          {
            name: 'spawn_subagent',
            input: { kind: 'researcher', task_name: 'ok_name', task: 't', mode: 'sync' },
          },
          { name: 'spawn_subagent', input: { kind: 'researcher', task_name: 'y', task: 't', mode: 'later' } },
          {
            name: 'spawn_subagent',
            input: { kind: 'researcher', task_name: 'z', task: 'x'.repeat(50_001), mode: 'async' },
          },
          { name: 'send_message_to_subagent', input: { subagent_id: 'ghost', message: 'hi' } },
          { name: 'interject_subagent', input: { subagent_id: 'ok_name', message: 'hi' } },
          { name: 'wait_for_subagents', input: { subagent_ids: ['ghost'] } },
          { name: 'list_subagents', input: { limit: 101 } },
          { name: 'list_subagents', input: { cursor: 'x'.repeat(513) } },
          { name: 'list_subagents', input: { cursor: 'not-a-cursor' } },
        ],
      },
      { text: 'I see.' },
    ]);
    const lead = defineAgent({
      name: 'lead',
      model,
      subagents: [{ agent: researcher, description: 'Finds sources.' }],
    });
    const run = await lead.ask('go', { runtime });
    expect(run.response).toBe('I see.');
    const results = toolResults(model.calls, 2);
    expect(results).toHaveLength(12);
    for (const result of results) expect(result.isError).toBe(true);
    const texts = results.map((result) => String(result.content));
    expect(texts).toEqual([
      'Invalid tool input: /kind: must be equal to one of the allowed values',
      'Invalid tool input: /task_name: must match pattern "^[a-z0-9_]+$"',
      'Invalid tool input: /task_name: must not have more than 40 characters',
      "A subagent named 'ok_name' exists already: send it a message with send_message_to_subagent, or spawn one with another task_name.",
      'Invalid tool input: /mode: must be equal to one of the allowed values',
      'task has 50001 characters; send at most 50000: summarise, or split the work.',
      'No subagent has the id "ghost". Known ids: ok_name.',
      "Subagent 'ok_name' is not working (it is idle); send it a message with send_message_to_subagent instead.",
      'No subagent has the id "ghost". Known ids: ok_name.',
      'Invalid tool input: /limit: must be <= 100',
      'Invalid tool input: /cursor: must not have more than 512 characters',
      'cursor is not a next_cursor list_subagents gave; call it without a cursor.',
    ]);
  });

  it('pages list_subagents with a cursor', async () => {
    const researcher = defineAgent({
      name: 'researcher',
      model: new MockModel({ stream: () => [{ type: 'finish', reason: 'stop' }] }),
    });
    const spawns = ['a', 'b', 'c'].map((name) => ({
      name: 'spawn_subagent',
      input: { kind: 'researcher', task_name: name, task: 't', mode: 'sync' },
    }));
    const listing = new MockModel({
      stream: (request, _options, call): ModelStreamPart[] => {
        if (call === 0) {
          return [
            ...spawns.flatMap((spawnCall, index) =>
              toolCallParts(index, `s${index}`, spawnCall.name, spawnCall.input),
            ),
            finishWithToolCalls,
          ];
        }
        if (call === 1)
          return [...toolCallParts(0, 'l1', 'list_subagents', { limit: 2 }), finishWithToolCalls];
        if (call === 2) {
          const page = parse(String(request.messages.at(-1)?.content)) as { next_cursor: string };
          return [
            ...toolCallParts(0, 'l2', 'list_subagents', { limit: 2, cursor: page.next_cursor }),
            finishWithToolCalls,
          ];
        }
        return [
          { type: 'text-delta', text: 'listed' },
          { type: 'finish', reason: 'stop' },
        ];
      },
    });
    const lead = defineAgent({
      name: 'lead',
      model: listing,
      subagents: [{ agent: researcher, description: 'Finds sources.' }],
    });
    const run = await lead.ask('go', { runtime });
    expect(run.response).toBe('listed');
    const first = toolResults(listing.calls, 2)[0]?.content as { subagents: unknown[]; next_cursor?: string };
    expect(first.subagents).toEqual([
      { subagent_id: 'a', kind: 'researcher', status: 'idle', turns: 1, queued_messages: 0 },
      expect.objectContaining({ subagent_id: 'b' }),
    ]);
    expect(typeof first.next_cursor).toBe('string');
    expect(toolResults(listing.calls, 3)[0]?.content).toEqual({
      subagents: [expect.objectContaining({ subagent_id: 'c' })],
    });
  });

  it('refuses a spawn past maxLiveSubagents, and wait answers still_working after its window', async () => {
    const researcher = defineAgent({ name: 'researcher', model: blockingModel() });
    const model = new ScriptedModel([
      {
        toolCalls: [
          { name: 'spawn_subagent', input: { kind: 'researcher', task_name: 'a', task: 't', mode: 'async' } },
          { name: 'spawn_subagent', input: { kind: 'researcher', task_name: 'b', task: 't', mode: 'async' } },
        ],
      },
      { toolCalls: [{ name: 'wait_for_subagents', input: {} }] },
      { text: 'gave up' },
    ]);
    const lead = defineAgent({
      name: 'lead',
      model,
      limits: { maxLiveSubagents: 1, subagentWaitMs: 1 },
      subagents: [{ agent: researcher, description: 'Finds sources.' }],
    });
    const stream = lead.streamAsk('go', { runtime });
    const events = await collect(stream);
    const run = await stream.run;
    expect(run.response).toBe('gave up');
    const spawned = toolResults(model.calls, 1);
    expect(spawned[0]).toMatchObject({ isError: false, content: { status: 'working' } });
    expect(spawned[1]?.isError).toBe(true);
    expect(String(spawned[1]?.content)).toContain('limits.maxLiveSubagents');
    expect(toolResults(model.calls, 2)[0]?.content).toEqual({
      status: 'still_working',
      subagents: [expect.objectContaining({ subagent_id: 'a', status: 'working' })],
    });
    // The lead answered while 'a' still worked: 'a' is cancelled before the run ends.
    const phases = subagentEvents(events).map((event) => event.phase);
    expect(phases).toEqual(['spawned', 'turn_started', 'cancelled']);
    const cancelledAt = events.findIndex(
      (event) => event.type === 'subagent' && event.data.phase === 'cancelled',
    );
    expect(cancelledAt).toBeLessThan(events.findIndex((event) => event.type === 'run_stop'));
  });

  it('cancels every subagent when the run is cancelled, and leaves nothing running', async () => {
    const controller = new AbortController();
    const started = deferred();
    const childModel = new MockModel({
      stream: async function* (_request, options) {
        started.resolve();
        await new Promise((_resolve, reject) => {
          options.signal.addEventListener('abort', () => reject(options.signal.reason), { once: true });
        });
        yield { type: 'finish', reason: 'stop' };
      },
    });
    const researcher = defineAgent({ name: 'researcher', model: childModel });
    const model = new ScriptedModel([
      {
        toolCalls: [
          { name: 'spawn_subagent', input: { kind: 'researcher', task_name: 'a', task: 't', mode: 'async' } },
          { name: 'spawn_subagent', input: { kind: 'researcher', task_name: 'b', task: 't', mode: 'sync' } },
        ],
      },
    ]);
    const lead = defineAgent({
      name: 'lead',
      model,
      subagents: [{ agent: researcher, description: 'Finds sources.' }],
    });
    const stream = lead.streamAsk('go', { runtime, signal: controller.signal });
    void started.promise.then(() => controller.abort());
    const events = await collect(stream);
    const run = await stream.run;
    expect(run.cancelled).toBe(true);
    const cancelled = subagentEvents(events).filter((event) => event.phase === 'cancelled');
    expect(cancelled.map((event) => event.subagentId).sort()).toEqual(['a', 'b']);
    expect(events.at(-1)?.type).toBe('run_cancel');
  });

  it('delivers interject_subagent to the working subagent at its next model turn', async () => {
    const firstAnswer = deferred();
    const childModel = new MockModel({
      stream: async function* (request, _options, call) {
        if (call === 0) await firstAnswer.promise;
        yield { type: 'text-delta', text: `seen: ${userTexts(request.messages).join(' | ')}` };
        yield { type: 'finish', reason: 'stop' };
      },
    });
    const researcher = defineAgent({ name: 'researcher', model: childModel });
    const model = new ScriptedModel([
      spawn({ kind: 'researcher', task_name: 'a', task: 'draft it', mode: 'async' }),
      { toolCalls: [{ name: 'interject_subagent', input: { subagent_id: 'a', message: 'in French' } }] },
      { toolCalls: [{ name: 'wait_for_subagents', input: {} }] },
      { text: 'ok' },
    ]);
    const lead = defineAgent({
      name: 'lead',
      model,
      subagents: [{ agent: researcher, description: 'Writes.' }],
    });
    const stream = lead.streamAsk('go', { runtime });
    for await (const event of stream) {
      if (event.type === 'tool_stop' && event.data.toolName === 'interject_subagent') firstAnswer.resolve();
    }
    expect((await stream.run).completed).toBe(true);
    expect(toolResults(model.calls, 2)[0]?.content).toEqual({ subagent_id: 'a', status: 'interjected' });
    expect(toolResults(model.calls, 3)[0]?.content).toMatchObject({
      status: 'done',
      subagents: [{ subagent_id: 'a', turns: 1, response: 'seen: draft it | in French' }],
    });
  });

  it('reports a failed turn, and the subagent takes the next message', async () => {
    const childModel = new ScriptedModel([{ text: 'first' }]);
    const researcher = defineAgent({ name: 'researcher', model: childModel, limits: { maxTurns: 1 } });
    const tool = defineTool({
      name: 'noop',
      description: 'does nothing',
      input: Type.Object({}),
      execute: () => 'ok',
    });
    const failing = defineAgent({
      name: 'failing',
      model: new ScriptedModel([{ toolCalls: [{ name: 'noop', input: {} }] }]),
      tools: [tool],
      limits: { maxTurns: 1 },
    });
    const model = new ScriptedModel([
      spawn({ kind: 'failing', task_name: 'f', task: 't', mode: 'sync' }),
      spawn({ kind: 'researcher', task_name: 'r', task: 't', mode: 'sync' }),
      { text: 'ok' },
    ]);
    const lead = defineAgent({
      name: 'lead',
      model,
      subagents: [
        { agent: researcher, description: 'Finds sources.' },
        { agent: failing, description: 'Fails.' },
      ],
    });
    const stream = lead.streamAsk('go', { runtime });
    const events = await collect(stream);
    expect((await stream.run).completed).toBe(true);
    expect(toolResults(model.calls, 1)[0]?.content).toMatchObject({
      subagent_id: 'f',
      status: 'failed',
      error: expect.stringContaining('maxTurns'),
    });
    expect(subagentEvents(events).find((event) => event.phase === 'turn_failed')).toMatchObject({
      subagentId: 'f',
      error: { code: 'AGENT_LIMIT_REACHED' },
    });
  });

  it('streams the subagent’s own events as agent_stream events placed under subagent:<task_name>', async () => {
    const researcher = defineAgent({ name: 'researcher', model: new ScriptedModel([{ text: 'hi' }]) });
    const lead = defineAgent({
      name: 'lead',
      model: new ScriptedModel([
        spawn({ kind: 'researcher', task_name: 'x', task: 't', mode: 'sync' }),
        { text: 'ok' },
      ]),
      subagents: [{ agent: researcher, description: 'Finds sources.' }],
    });
    const events = await collect(lead.streamAsk('go', { runtime, includeAgentEvents: true }));
    const nested = events.flatMap((event) => (event.type === 'agent_stream' ? [event.data] : []));
    expect(nested.length).toBeGreaterThan(0);
    for (const { source } of nested) expect(source.path.slice(0, 2)).toEqual(['subagent:x', 'researcher']);
    expect(nested.at(-1)?.event.type).toBe('invocation_stop');
  });

  it('refuses subagents past maxDepth with a tool error', async () => {
    const researcher = defineAgent({ name: 'researcher', model: new ScriptedModel([]) });
    const model = new ScriptedModel([
      spawn({ kind: 'researcher', task_name: 'x', task: 't', mode: 'sync' }),
      { text: 'ok' },
    ]);
    const lead = defineAgent({
      name: 'lead',
      model,
      limits: { maxDepth: 1 },
      subagents: [{ agent: researcher, description: 'Finds sources.' }],
    });
    // One level is allowed: the subagent runs. Its own subagents would not.
    const deep = defineAgent({
      name: 'deep',
      model: new ScriptedModel([
        spawn({ kind: 'lead', task_name: 'y', task: 't', mode: 'sync' }),
        { text: 'ok' },
      ]),
      limits: { maxDepth: 1 },
      subagents: [{ agent: lead, description: 'Leads.' }],
    });
    const run = await deep.ask('go', { runtime });
    expect(run.completed).toBe(true);
    const spawned = toolResults(model.calls, 1)[0];
    expect(spawned?.content).toMatchObject({
      status: 'failed',
      error: expect.stringContaining('limits.maxDepth'),
    });
  });
});

describe('persisted subagents', () => {
  it('keep their conversation in the run’s session: a later run continues it', async () => {
    const store = memorySessionStore();
    const withStore = createRuntime({ sessionStore: store });
    const childModel = new MockModel({
      stream: (request) => [
        { type: 'text-delta', text: `noted ${userTexts(request.messages).length}` },
        { type: 'finish', reason: 'stop' },
      ],
    });
    const notes = defineAgent({ name: 'notes', model: childModel });
    const leadModel = new ScriptedModel([
      spawn({ kind: 'notes', task_name: 'diary', task: 'remember A', mode: 'sync' }),
      { text: 'one' },
      spawn({ kind: 'notes', task_name: 'diary', task: 'remember B', mode: 'sync' }),
      { text: 'two' },
    ]);
    const lead = defineAgent({
      name: 'lead',
      model: leadModel,
      subagents: [{ agent: notes, description: 'Keeps notes.', persist: true }],
    });
    const session = { id: 'chat-1', actor: 'user-1' };
    expect((await lead.ask('first', { runtime: withStore, session })).completed).toBe(true);
    expect((await lead.ask('second', { runtime: withStore, session })).completed).toBe(true);
    expect(userTexts(childModel.calls[1]?.messages ?? [])).toEqual(['remember A', 'remember B']);
    expect(toolResults(leadModel.calls, 3)[0]?.content).toMatchObject({ response: 'noted 2' });
  });

  it('need a session store: ask fails with a ConfigurationError without one', () => {
    const notes = defineAgent({ name: 'notes', model: new ScriptedModel([]) });
    const lead = defineAgent({
      name: 'lead',
      model: new ScriptedModel([]),
      subagents: [{ agent: notes, description: 'Keeps notes.', persist: true }],
    });
    expect(() => lead.createRun('hi', { runtime })).toThrow(ConfigurationError);
    expect(() => lead.createRun('hi', { runtime })).toThrow(/persist: true/);
  });
});

describe('subagent definitions', () => {
  const researcher = defineAgent({ name: 'researcher', model: new ScriptedModel([]) });
  const model = new ScriptedModel([]);

  it.each<[unknown, RegExp]>([
    [[{ agent: researcher }], /without a description/],
    [[{ agent: {}, description: 'x' }], /not made with defineAgent/],
    [
      [
        { agent: researcher, description: 'x' },
        { agent: researcher, description: 'y' },
      ],
      /two subagents of kind 'researcher'/,
    ],
    [[{ agent: researcher, kind: 'has space', description: 'x' }], /kind "has space" is invalid/],
    [[{ agent: researcher, description: 'x', extra: 1 }], /no option 'extra'/],
    ['researcher', /as a list/],
  ])('rejects subagents %#', (subagents, message) => {
    expect(() => defineAgent({ name: 'lead', model, subagents: subagents as never })).toThrow(message);
  });

  it('rejects a tool named like a control tool', () => {
    const clash = defineTool({
      name: 'spawn_subagent',
      description: 'mine',
      input: Type.Object({}),
      execute: () => 'x',
    });
    expect(() =>
      defineAgent({
        name: 'lead',
        model,
        tools: [clash],
        subagents: [{ agent: researcher, description: 'x' }],
      }),
    ).toThrow(/name of a subagent control tool/);
  });
});

function toolCallParts(index: number, id: string, name: string, input: unknown): ModelStreamPart[] {
  return [
    { type: 'tool-call-start', index, id, name },
    { type: 'tool-call-delta', index, argumentsDelta: JSON.stringify(input) },
    { type: 'tool-call-stop', index },
  ];
}

const finishWithToolCalls: ModelStreamPart = { type: 'finish', reason: 'tool-calls' };
