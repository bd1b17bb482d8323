import Type from 'typebox';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defineAgent } from './agent.js';
import { ConfigurationError } from './errors.js';
import { memorySessionStore } from './memory-session-store.js';
import { createRuntime } from './runtime.js';
import { SessionAccessError, SessionBusyError } from './session-errors.js';
import { countOpenHandles, newOpenHandles } from './testing/open-handles.js';
import { ScriptedModel } from './testing/scripted-model.js';
import { defineTool } from './tool.js';

let handlesBefore: Map<string, number>;
beforeEach(() => {
  handlesBefore = countOpenHandles();
});
afterEach(async () => {
  expect(await newOpenHandles(handlesBefore)).toEqual([]);
});

const chat = { id: 'chat-1', actor: 'ana' };

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks an order up.',
  input: Type.Object({ order: Type.String() }),
  execute: ({ order }) => `order ${order}: paid`,
});

function refundTool() {
  const execute = vi.fn(async ({ order }: { order: string }) => `refunded ${order}`);
  const tool = defineTool({
    name: 'refund',
    description: 'Refunds an order.',
    input: Type.Object({ order: Type.String() }),
    execute,
    needsApproval: true,
  });
  return { tool, execute };
}

function setup(script: ConstructorParameters<typeof ScriptedModel>[0]) {
  const store = memorySessionStore();
  const runtime = createRuntime({ sessionStore: store });
  const { tool, execute } = refundTool();
  const agent = defineAgent({ name: 'support', model: new ScriptedModel(script), tools: [lookup, tool] });
  return { store, runtime, agent, execute };
}

describe('runtime.readSession()', () => {
  it('reads back the conversation the runs kept, decoded as the next run loads it', async () => {
    const { runtime, agent } = setup([
      { toolCalls: [{ id: 'c1', name: 'lookup', input: { order: '1042' } }] },
      { text: 'Order 1042 is paid.' },
      { text: 'Yes, it shipped.' },
    ]);
    await agent.ask('Is order 1042 paid?', { runtime, session: chat });
    const second = await agent.ask('Did it ship?', { runtime, session: chat });
    expect(second.outcome).toBe('completed');

    const read = await runtime.readSession({ ...chat, limit: 100 });
    expect(read.exists).toBe(true);
    expect(read.pendingApprovals).toEqual([]);
    expect(read.history.map((entry) => entry.message)).toEqual(second.messages);
    expect(read.history.map((entry) => entry.position)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(read.history[2]?.message).toMatchObject({ role: 'tool', content: 'order 1042: paid' });
    expect(read.history.at(-1)).toMatchObject({ outcome: 'completed', operationId: second.operationId });
  });

  it('reads the newest `limit` messages, oldest first, and the page before a position', async () => {
    const { runtime, agent } = setup([{ text: 'One.' }, { text: 'Two.' }, { text: 'Three.' }]);
    for (const question of ['1?', '2?', '3?']) await agent.ask(question, { runtime, session: chat });

    const newest = await runtime.readSession({ ...chat, limit: 2 });
    expect(newest.history.map((entry) => entry.message.content)).toEqual(['3?', 'Three.']);
    const before = await runtime.readSession({ ...chat, limit: 3, before: newest.history[0]?.position });
    expect(before.history.map((entry) => entry.message.content)).toEqual(['One.', '2?', 'Two.']);
    const none = await runtime.readSession({ ...chat, limit: 0 });
    expect(none).toEqual({ exists: true, history: [], pendingApprovals: [], pausedTurn: [] });
  });

  it('refuses another actor as a run would, and reads nothing', async () => {
    const { runtime, agent } = setup([{ text: 'Hello.' }]);
    await agent.ask('Hi', { runtime, session: chat });
    const refused = runtime.readSession({ id: chat.id, actor: 'mallory' });
    await expect(refused).rejects.toBeInstanceOf(SessionAccessError);
    await expect(refused).rejects.not.toThrow(/ana|Hello/);
  });

  it('says a session never written does not exist, and creates nothing', async () => {
    const { runtime, store } = setup([]);
    const read = await runtime.readSession({ id: 'never-written', actor: 'ana' });
    expect(read).toEqual({ exists: false, history: [], pendingApprovals: [], pausedTurn: [] });
    expect((await store.list({ actor: 'ana' })).sessions).toEqual([]);
  });

  it('lists what a paused run waits for, the same as the run did, and nothing once it is resumed', async () => {
    const { runtime, store, agent, execute } = setup([
      { toolCalls: [{ id: 'c1', name: 'refund', input: { order: '1042' } }] },
      { text: 'Refunded.' },
    ]);
    const paused = await agent.ask('Refund order 1042', { runtime, session: chat, approvals: 'suspend' });
    expect(paused.outcome).toBe('suspended');

    // Another runtime on the same store: a process restarted since the run paused.
    const restarted = createRuntime({ sessionStore: store });
    const read = await restarted.readSession(chat);
    expect(read.exists).toBe(true);
    expect(read.pendingApprovals).toEqual(paused.pendingApprovals);
    expect(read.pendingApprovals).toMatchObject([
      { toolName: 'refund', toolCallId: 'c1', input: { order: '1042' }, agentName: 'support' },
    ]);
    const [waiting] = read.pendingApprovals;
    expect(waiting?.approvalId).toMatch(/^[0-9a-f-]{36}$/);
    // The paused turn is not in the history yet, so a page that reloads shows it from here.
    expect(read.history).toEqual([]);
    expect(read.pausedTurn).toEqual([
      { role: 'user', content: 'Refund order 1042' },
      expect.objectContaining({
        role: 'assistant',
        toolCalls: [expect.objectContaining({ id: 'c1', name: 'refund' })],
      }),
    ]);

    const resumed = await agent.resume({
      runtime: restarted,
      session: chat,
      decisions: { [waiting?.approvalId ?? '']: 'approve' },
    });
    expect(resumed.outcome).toBe('completed');
    expect(execute).toHaveBeenCalledTimes(1);
    const after = await restarted.readSession(chat);
    expect(after.pendingApprovals).toEqual([]);
    expect(after.pausedTurn).toEqual([]);
    expect(after.history.map((entry) => entry.message)).toEqual(resumed.messages);
  });

  it('waits for a run holding the session, then reads its turn, and leaves no lock behind', async () => {
    let finishLookup: () => void = () => {};
    const slowLookup = defineTool({
      name: 'lookup',
      description: 'Looks an order up.',
      input: Type.Object({ order: Type.String() }),
      execute: () =>
        new Promise<string>((resolve) => {
          finishLookup = () => resolve('paid');
        }),
    });
    const store = memorySessionStore();
    const runtime = createRuntime({ sessionStore: store });
    const model = new ScriptedModel([
      { toolCalls: [{ id: 'c1', name: 'lookup', input: { order: '7' } }] },
      { text: 'Paid.' },
      { text: 'Still paid.' },
    ]);
    const agent = defineAgent({ name: 'support', model, tools: [slowLookup] });
    const stream = agent.streamAsk('Is 7 paid?', { runtime, session: chat });
    let reading: ReturnType<typeof runtime.readSession> | undefined;
    for await (const event of stream) {
      if (event.type !== 'tool_start') continue;
      // The run holds the session now: a read that will not wait is refused...
      await expect(runtime.readSession({ ...chat, lockTimeoutMs: 0 })).rejects.toBeInstanceOf(
        SessionBusyError,
      );
      // ...one whose signal ends the wait rejects with its reason...
      const controller = new AbortController();
      const abandoned = runtime.readSession({ ...chat, signal: controller.signal });
      const reason = new Error('The page closed.');
      controller.abort(reason);
      await expect(abandoned).rejects.toBe(reason);
      // ...and one that waits gets the turn once the run has written it.
      reading = runtime.readSession(chat);
      finishLookup();
    }
    const run = await stream.run;
    const read = await reading;
    expect(read?.history.map((entry) => entry.message)).toEqual(run.messages);

    // A run right after starts at once: the read released the session.
    const next = await agent.ask('And now?', { runtime, session: { ...chat, lockTimeoutMs: 0 } });
    expect(next.outcome).toBe('completed');
    expect(next.response).toBe('Still paid.');
  });

  it('needs a session store, and checks the request before it opens anything', async () => {
    await expect(createRuntime().readSession(chat)).rejects.toThrow(/createRuntime\(\{ sessionStore \}\)/);
    await expect(createRuntime().readSession(chat)).rejects.toBeInstanceOf(ConfigurationError);
    const { runtime } = setup([]);
    await expect(runtime.readSession({ ...chat, limit: -1 })).rejects.toThrow(/limit of 0 or more/);
    await expect(runtime.readSession({ ...chat, id: '' })).rejects.toBeInstanceOf(ConfigurationError);
    await expect(runtime.readSession({ ...chat, page: 2 } as never)).rejects.toThrow(/no option 'page'/);
  });
});
