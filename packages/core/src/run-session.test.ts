import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { defineAgent } from './agent.js';
import { ConfigurationError, ToolError } from './errors.js';
import { memorySessionStore } from './memory-session-store.js';
import type { ModelMessage } from './model.js';
import { ModelUnavailableError } from './model-errors.js';
import { createRuntime, type Runtime } from './runtime.js';
import {
  SessionAccessError,
  SessionBusyError,
  SessionConflictError,
  SessionLimitError,
} from './session-errors.js';
import type { SessionStoreV1 } from './session-store.js';
import { ScriptedModel } from './testing/scripted-model.js';
import { defineTool } from './tool.js';

const chat = { id: 'chat-1', actor: 'user-42' };

function sessionRuntime(store: SessionStoreV1 = memorySessionStore()): {
  runtime: Runtime;
  store: SessionStoreV1;
} {
  return { runtime: createRuntime({ sessionStore: store }), store };
}

async function storedMessages(store: SessionStoreV1, id = chat.id, actor = chat.actor) {
  const session = await store.open({ id, actor, lockTimeoutMs: 1_000 });
  try {
    return await session.history({ limit: 10_000 });
  } finally {
    await session.release();
  }
}

const lookup = defineTool({
  name: 'lookup',
  description: 'Finds a help-center entry.',
  input: Type.Object({ topic: Type.String() }),
  execute: ({ topic }) => ({ topic, text: 'Refunds take 5 business days.' }),
});

describe('runs that continue a session', () => {
  it('gives the model the whole earlier conversation, so the application sends only the new message', async () => {
    const { runtime } = sessionRuntime();
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'lookup', input: { topic: 'refunds' } }] },
      { text: 'Refunds take 5 business days.' },
      { text: 'Shipping is free.' },
    ]);
    const agent = defineAgent({ name: 'support', model, tools: [lookup] });
    const first = await agent.ask('How long do refunds take?', { runtime, session: chat });
    expect(first.outcome).toBe('completed');
    expect(first.session?.id).toBe('chat-1');
    expect(first.session?.actor).toBe('user-42');
    expect(first.invocation.sessionId).toBe('chat-1');
    expect(first.invocation.actorId).toBe('user-42');

    const second = await agent.ask('And shipping?', { runtime, session: chat });
    expect(second.outcome).toBe('completed');
    const seen = model.calls[2]?.messages.map((message) => message.role);
    expect(seen).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
    expect(model.calls[2]?.messages.at(-1)).toEqual({ role: 'user', content: 'And shipping?' });
    expect(model.calls[2]?.messages[3]).toEqual({
      role: 'assistant',
      content: 'Refunds take 5 business days.',
    });
    // run.messages is what the model saw plus the answer.
    expect(second.messages).toHaveLength(6);
  });

  it('writes each turn once, keyed by its run id, with its outcome', async () => {
    const { runtime, store } = sessionRuntime();
    const agent = defineAgent({ name: 'a', model: new ScriptedModel([{ text: 'one' }, { text: 'two' }]) });
    const first = await agent.ask('1?', { runtime, session: chat });
    const second = await agent.ask('2?', { runtime, session: chat });
    const records = await storedMessages(store);
    expect(records.map((record) => [record.operationId, record.outcome])).toEqual([
      [first.operationId, 'completed'],
      [first.operationId, 'completed'],
      [second.operationId, 'completed'],
      [second.operationId, 'completed'],
    ]);
  });

  it('merges the state into the context under ask()’s own, lets tools change it, and saves it with the turn', async () => {
    const { runtime } = sessionRuntime();
    const seenContexts: unknown[] = [];
    const remember = defineTool({
      name: 'remember',
      description: 'Remembers the customer name.',
      input: Type.Object({ name: Type.String() }),
      execute: ({ name }, context) => {
        seenContexts.push(context.run.invocation.context);
        const session = context.run.session;
        if (session === undefined) throw new ToolError('no session');
        session.state.customer = name;
        session.state.visits = ((session.state.visits as number | undefined) ?? 0) + 1;
        return 'ok';
      },
    });
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'remember', input: { name: 'Ada' } }] },
      { text: 'Hello Ada.' },
      { toolCalls: [{ name: 'remember', input: { name: 'Ada' } }] },
      { text: 'Welcome back.' },
    ]);
    const agent = defineAgent({ name: 'a', model, tools: [remember] });
    const first = await agent.ask('I am Ada.', { runtime, session: chat, context: { plan: 'pro' } });
    expect(first.session?.state).toEqual({ customer: 'Ada', visits: 1 });
    const second = await agent.ask('Hi again.', {
      runtime,
      session: chat,
      context: { plan: 'free', visits: 'from ask' },
    });
    expect(second.session?.state).toEqual({ customer: 'Ada', visits: 2 });
    expect(seenContexts[0]).toEqual({ plan: 'pro' });
    // The saved state comes first, and ask()'s context wins key by key.
    expect(seenContexts[1]).toEqual({ customer: 'Ada', visits: 'from ask', plan: 'free' });
    expect(second.invocation.context).toEqual({ customer: 'Ada', visits: 'from ask', plan: 'free' });
  });

  it('refuses another actor with SessionAccessError, and the run fails without touching the session', async () => {
    const { runtime, store } = sessionRuntime();
    const agent = defineAgent({ name: 'a', model: new ScriptedModel([{ text: 'mine' }]) });
    await agent.ask('secret question', { runtime, session: chat });
    const model = new ScriptedModel([]);
    const intruder = defineAgent({ name: 'b', model });
    const run = await intruder.ask('what did they ask?', {
      runtime,
      session: { id: chat.id, actor: 'mallory' },
    });
    expect(run.outcome).toBe('failed');
    expect(SessionAccessError.isInstance(run.error)).toBe(true);
    expect(run.error?.message).not.toContain('user-42');
    expect(model.calls).toHaveLength(0);
    expect(await storedMessages(store)).toHaveLength(2);
  });

  it('checks the session options when the run is made', () => {
    const agent = defineAgent({ name: 'a', model: new ScriptedModel([]) });
    const { runtime } = sessionRuntime();
    const cases: [unknown, RegExp][] = [
      [{ id: '', actor: 'a' }, /session id/],
      [{ id: 'x', actor: 'a\u0000b' }, /printable/],
      [{ id: 'x'.repeat(10_000), actor: 'a' }, /1 to 256/],
      [{ id: 'x', actor: 'a', historyLimit: -1 }, /historyLimit/],
      [{ id: 'x', actor: 'a', lockTimeoutMs: Number.NaN }, /lockTimeoutMs/],
      [{ id: 'x', actor: 'a', store: 'y' }, /no option 'store'/],
    ];
    for (const [session, message] of cases) {
      expect(() => agent.createRun('hi', { runtime, session: session as never })).toThrow(message);
    }
    expect(() => agent.createRun('hi', { runtime: createRuntime(), session: chat })).toThrow(
      /createRuntime\(\{ sessionStore \}\)/,
    );
    expect(() => agent.createRun('hi', { runtime, session: chat, actorId: 'someone-else' })).toThrow(
      ConfigurationError,
    );
    expect(agent.createRun('hi', { runtime, session: chat, actorId: chat.actor }).invocation.actorId).toBe(
      chat.actor,
    );
  });

  it('shows the model a window of the newest messages that starts at a user message', async () => {
    const { runtime } = sessionRuntime();
    const script = [
      { toolCalls: [{ name: 'lookup', input: { topic: 'a' } }] },
      { text: 'first answer' },
      { toolCalls: [{ name: 'lookup', input: { topic: 'b' } }] },
      { text: 'second answer' },
      { text: 'third answer' },
    ];
    const model = new ScriptedModel(script);
    const agent = defineAgent({ name: 'a', model, tools: [lookup] });
    await agent.ask('q1', { runtime, session: chat });
    await agent.ask('q2', { runtime, session: chat });
    // Stored: q1, call, result, answer, q2, call, result, answer (8). The newest 6 start at a tool
    // call's result, so the window begins at q2.
    await agent.ask('q3', { runtime, session: { ...chat, historyLimit: 6 } });
    const sent = model.calls[4]?.messages ?? [];
    expect(sent.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
    expect(sent[0]).toEqual({ role: 'user', content: 'q2' });
  });

  it('keeps bytes and URLs of a message, and leaves reasoning out of the history', async () => {
    const { runtime, store } = sessionRuntime();
    const model = new ScriptedModel([{ reasoning: 'thinking hard', text: 'a red pixel' }, { text: 'yes' }]);
    const agent = defineAgent({ name: 'a', model });
    const png = new Uint8Array([137, 80, 78, 71, 0, 255]);
    const input: ModelMessage[] = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image', data: png, mediaType: 'image/png' },
          { type: 'file', data: new URL('https://example.com/a.pdf'), mediaType: 'application/pdf' },
        ],
      },
    ];
    await agent.ask(input, { runtime, session: chat });
    await agent.ask('Sure?', { runtime, session: chat });
    const sent = model.calls[1]?.messages ?? [];
    expect(sent[0]).toEqual(input[0]);
    expect(sent[1]).toEqual({ role: 'assistant', content: 'a red pixel' });
    const stored = await storedMessages(store);
    expect(stored[1]?.message).not.toContain('thinking hard');
  });

  it('serialises two runs on one session: the second waits, then sees the first turn', async () => {
    const { runtime } = sessionRuntime();
    const model = new ScriptedModel([{ text: 'slow answer', delayMs: 100 }, { text: 'second answer' }]);
    const agent = defineAgent({ name: 'a', model });
    const [first, second] = await Promise.all([
      agent.ask('first', { runtime, session: chat }),
      agent.ask('second', { runtime, session: chat }),
    ]);
    expect(first.outcome).toBe('completed');
    expect(second.outcome).toBe('completed');
    expect(model.calls[1]?.messages).toEqual([
      { role: 'user', content: 'first' },
      { role: 'assistant', content: 'slow answer' },
      { role: 'user', content: 'second' },
    ]);
  });

  it('fails the waiting run with SessionBusyError after lockTimeoutMs, writing nothing for it', async () => {
    const { runtime, store } = sessionRuntime();
    const model = new ScriptedModel([{ text: 'slow', delayMs: 300 }]);
    const agent = defineAgent({ name: 'a', model });
    const [first, second] = await Promise.all([
      agent.ask('first', { runtime, session: chat }),
      new Promise((resolve) => setTimeout(resolve, 20)).then(() =>
        agent.ask('second', { runtime, session: { ...chat, lockTimeoutMs: 50 } }),
      ),
    ]);
    expect(first.outcome).toBe('completed');
    expect(second.outcome).toBe('failed');
    expect(SessionBusyError.isInstance(second.error)).toBe(true);
    expect((await storedMessages(store)).map((record) => record.operationId)).toEqual([
      first.operationId,
      first.operationId,
    ]);
  });

  it('cancels a run that waits for the session, and releases it after every run', async () => {
    const { runtime } = sessionRuntime();
    const agent = defineAgent({
      name: 'a',
      model: new ScriptedModel([{ text: 'slow', delayMs: 200 }, { text: 'ok' }]),
    });
    const controller = new AbortController();
    const holding = agent.ask('first', { runtime, session: chat });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const waiting = agent.ask('second', { runtime, session: chat, signal: controller.signal });
    controller.abort();
    expect((await waiting).outcome).toBe('cancelled');
    expect((await holding).outcome).toBe('completed');
    const next = await agent.ask('third', { runtime, session: { ...chat, lockTimeoutMs: 0 } });
    expect(next.outcome).toBe('completed');
  });
});

describe('what a run that ends early leaves in its session', () => {
  const failingTool = defineTool({
    name: 'charge',
    description: 'Charges the card.',
    input: Type.Object({}),
    execute: () => 'charged',
  });

  it('keeps the input and the answers it finished, marked, when a later model turn fails', async () => {
    const { runtime, store } = sessionRuntime();
    const model = new ScriptedModel([{ toolCalls: [{ name: 'charge', input: {} }] }]);
    // The second turn fails: the provider is down.
    const failing = {
      ...model,
      specificationVersion: 'model-v1' as const,
      provider: 'test',
      modelId: 'flaky',
      calls: 0,
      stream(
        request: Parameters<ScriptedModel['stream']>[0],
        options: Parameters<ScriptedModel['stream']>[1],
      ) {
        this.calls += 1;
        if (this.calls === 2) throw new ModelUnavailableError('The provider is down.');
        return model.stream(request, options);
      },
    };
    const agent = defineAgent({ name: 'a', model: failing, tools: [failingTool] });
    const run = await agent.ask('Charge me.', { runtime, session: chat });
    expect(run.outcome).toBe('failed');
    const stored = await storedMessages(store);
    expect(stored.map((record) => JSON.parse(record.message).role)).toEqual(['user', 'assistant', 'tool']);
    expect(
      stored.every((record) => record.outcome === 'failed' && record.operationId === run.operationId),
    ).toBe(true);
  });

  it('leaves nothing when the run finished no model answer, so retrying the input does not repeat it', async () => {
    const { runtime, store } = sessionRuntime();
    const failing = new ScriptedModel([]); // its first turn fails: the script has no step
    const agent = defineAgent({ name: 'a', model: failing });
    const run = await agent.ask('Hello?', { runtime, session: chat });
    expect(run.outcome).toBe('failed');
    expect(await storedMessages(store)).toEqual([]);
  });

  it('keeps nothing of a cancelled run that was still in its first answer', async () => {
    const { runtime, store } = sessionRuntime();
    const agent = defineAgent({
      name: 'a',
      model: new ScriptedModel([{ text: ['a', 'b', 'c'], delayMs: 50 }]),
    });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 60);
    const run = await agent.ask('Hello?', { runtime, session: chat, signal: controller.signal });
    expect(run.outcome).toBe('cancelled');
    expect(await storedMessages(store)).toEqual([]);
  });

  it('keeps the finished tool round of a run that reached its deadline, marked partial', async () => {
    const { runtime, store } = sessionRuntime();
    const agent = defineAgent({
      name: 'a',
      model: new ScriptedModel([
        { toolCalls: [{ name: 'charge', input: {} }] },
        { text: 'done', delayMs: 500 },
      ]),
      tools: [failingTool],
    });
    const run = await agent.ask('Charge me.', { runtime, session: chat, timeoutMs: 200 });
    expect(run.outcome).toBe('partial');
    const stored = await storedMessages(store);
    expect(stored.map((record) => [JSON.parse(record.message).role, record.outcome])).toEqual([
      ['user', 'partial'],
      ['assistant', 'partial'],
      ['tool', 'partial'],
    ]);
  });

  it('fails a completed run whose turn is over a limit, and writes nothing of it', async () => {
    const { runtime, store } = sessionRuntime(memorySessionStore({ limits: { maxMessageBytes: 200 } }));
    const agent = defineAgent({ name: 'a', model: new ScriptedModel([{ text: 'x'.repeat(500) }]) });
    const run = await agent.ask('Write a lot.', { runtime, session: chat });
    expect(run.outcome).toBe('failed');
    expect(run.response).toBe('');
    expect(SessionLimitError.isInstance(run.error)).toBe(true);
    expect((run.error as SessionLimitError).limit).toBe('maxMessageBytes');
    expect(await storedMessages(store)).toEqual([]);
  });
});

describe('run.session from a tool', () => {
  it('refuses an operation id that no store could keep verbatim (empty, NUL, over 256 characters)', async () => {
    const { runtime } = sessionRuntime();
    const refusals: unknown[] = [];
    const note = defineTool({
      name: 'note',
      description: 'Adds a note.',
      input: Type.Object({}),
      execute: async (_input, context) => {
        for (const operationId of ['', 'a\u0000b', 'x'.repeat(257)]) {
          const error = await context.run.session
            ?.append([{ role: 'user', content: 'note' }], { operationId })
            .catch((caught: unknown) => caught);
          refusals.push(ConfigurationError.isInstance(error) && error.code);
        }
        return 'ok';
      },
    });
    const model = new ScriptedModel([{ toolCalls: [{ name: 'note', input: {} }] }, { text: 'done' }]);
    await defineAgent({ name: 'a', model, tools: [note] }).ask('hi', { runtime, session: chat });
    expect(refusals).toEqual(['SESSION_OPTION_INVALID', 'SESSION_OPTION_INVALID', 'SESSION_OPTION_INVALID']);
  });

  it('appends idempotently, replaces the tail by compare-and-swap, and pages the history', async () => {
    const { runtime, store } = sessionRuntime();
    const results: unknown[] = [];
    const curate = defineTool({
      name: 'curate',
      description: 'Tidies the history.',
      input: Type.Object({}),
      execute: async (_input, context) => {
        const session = context.run.session;
        if (session === undefined) throw new ToolError('no session');
        const note: ModelMessage = { role: 'user', content: 'note from the app' };
        await session.append([note], { operationId: 'note-1' });
        await session.append([note], { operationId: 'note-1' }); // idempotent
        const reused = await session
          .append([{ role: 'user', content: 'other' }], { operationId: 'note-1' })
          .catch((error: unknown) => error);
        results.push(SessionConflictError.isInstance(reused) && reused.reason);
        const tail = (await session.history({ limit: 2 })).map((entry) => entry.message);
        const moved = await session
          .replace({ expectedTail: [{ role: 'user', content: 'not the tail' }], messages: [] })
          .catch((error: unknown) => error);
        results.push(SessionConflictError.isInstance(moved) && moved.reason);
        await session.replace({ expectedTail: tail, messages: [{ role: 'user', content: 'summary' }] });
        const page = await session.history({ limit: 1, before: 1 });
        results.push(page.map((entry) => [entry.position, entry.message]));
        results.push(session.messageCount);
        return 'tidied';
      },
    });
    const model = new ScriptedModel([
      { text: 'hello' },
      { toolCalls: [{ name: 'curate', input: {} }] },
      { text: 'done' },
    ]);
    const agent = defineAgent({ name: 'a', model, tools: [curate] });
    await agent.ask('hi', { runtime, session: chat });
    await agent.ask('tidy up', { runtime, session: chat });
    expect(results).toEqual(['operation-reused', 'tail-moved', [[0, { role: 'user', content: 'hi' }]], 2]);
    const stored = await storedMessages(store);
    expect(stored.map((record) => JSON.parse(record.message).content)).toEqual([
      'hi',
      'summary',
      'tidy up',
      '',
      'tidied',
      'done',
    ]);
  });
});
