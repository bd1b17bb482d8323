import Type from 'typebox';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defineAgent } from './agent.js';
import { ConfigurationError, PausedRunError, RunResumeConflictError } from './errors.js';
import { memorySessionStore } from './memory-session-store.js';
import type { ModelRequest } from './model.js';
import { createRuntime } from './runtime.js';
import { SessionBusyError } from './session-errors.js';
import type { OpenedSessionV1, SessionStoreV1, SessionWrite } from './session-store.js';
import type { StreamEvent } from './stream-event.js';
import type { TelemetryV1 } from './telemetry.js';
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

const session = { id: 'chat-1', actor: 'ana' };

type RefundExecute = (input: { order: string }, context: { signal: AbortSignal }) => Promise<string>;

function refundTool(execute = vi.fn<RefundExecute>(async (input) => `refunded ${input.order}`)) {
  const tool = defineTool({
    name: 'refund',
    description: 'Refunds an order.',
    input: Type.Object({ order: Type.String() }),
    execute,
    needsApproval: true,
  });
  return { tool, execute };
}

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks an order up.',
  input: Type.Object({ order: Type.String() }),
  execute: async (input) => `order ${input.order}: paid`,
});

const callRefund = (order: string, id = 'c1') => ({ id, name: 'refund', input: { order } });

/** A store whose writes are logged beside the run's events, to see which came first. */
function loggingStore(log: string[], store: SessionStoreV1 = memorySessionStore()): SessionStoreV1 {
  const logged = (handle: OpenedSessionV1): OpenedSessionV1 => ({
    ...{ id: handle.id, actor: handle.actor, isNew: handle.isNew, state: handle.state },
    get messageCount() {
      return handle.messageCount;
    },
    get byteCount() {
      return handle.byteCount;
    },
    get pause() {
      return handle.pause;
    },
    history: (request) => handle.history(request),
    release: () => handle.release(),
    write: async (write: SessionWrite) => {
      const result = await handle.write(write);
      log.push(write.pause === undefined ? 'write' : write.pause === null ? 'write:clear' : 'write:pause');
      return result;
    },
  });
  return { ...store, open: async (request) => logged(await store.open(request)) };
}

function setup(script: ConstructorParameters<typeof ScriptedModel>[0], store = memorySessionStore()) {
  const { tool, execute } = refundTool();
  const model = new ScriptedModel(script);
  const agent = defineAgent({ name: 'support', model, tools: [tool, lookup] });
  return { agent, model, execute, store, runtime: createRuntime({ sessionStore: store }) };
}

function toolResults(request: ModelRequest | undefined) {
  return (request?.messages ?? []).filter((message) => message.role === 'tool');
}

describe("ask(input, { session, approvals: 'suspend' })", () => {
  it('saves the pause before announcing it, runs nothing, and ends suspended', async () => {
    const log: string[] = [];
    const store = loggingStore(log);
    const { agent, execute } = setup([
      { toolCalls: [callRefund('1042'), { id: 'c2', name: 'lookup', input: { order: '1042' } }] },
    ]);
    const stream = agent.streamAsk('Refund order 1042', {
      runtime: createRuntime({ sessionStore: store }),
      session,
      approvals: 'suspend',
    });
    const events: StreamEvent[] = [];
    for await (const event of stream) {
      events.push(event);
      if (event.type === 'approval_requested' || event.type === 'run_suspend') log.push(event.type);
    }
    const run = await stream.run;
    expect(run.error).toBeUndefined();
    expect(run.outcome).toBe('suspended');
    expect(run.suspended).toBe(true);
    expect(execute).not.toHaveBeenCalled();
    expect(log).toEqual(['write:pause', 'approval_requested', 'run_suspend']);
    const [pending] = run.pendingApprovals;
    expect(pending).toMatchObject({ toolName: 'refund', toolCallId: 'c1', input: { order: '1042' } });
    const terminal = events.at(-1);
    expect(terminal?.type).toBe('run_suspend');
    if (terminal?.type === 'run_suspend')
      expect(terminal.data.pendingApprovals).toEqual(run.pendingApprovals);
    // The call that needed no approval ran; the waiting one shows no result on the public stream.
    const stops = events.filter((event) => event.type === 'tool_stop');
    expect(stops.map((event) => event.data.toolCallId)).toEqual(['c2']);
    expect((await store.list({ actor: 'ana' })).sessions[0]?.hasPausedRun).toBe(true);
    // Its approvals are answered by agent.resume(), not on the finished run.
    expect(() => run.approve(pending?.approvalId ?? '')).toThrow(/agent\.resume/);
  });

  it('needs a session', () => {
    const { agent } = setup([]);
    expect(() => agent.createRun('hi', { approvals: 'suspend' })).toThrow(ConfigurationError);
    expect(() => agent.createRun('hi', { approvals: 'later' as never })).toThrow(/'wait' or 'suspend'/);
  });

  it('refuses a new run on a session that waits for a person, until the pause is resumed', async () => {
    const { agent, runtime } = setup([{ toolCalls: [callRefund('1')] }]);
    await agent.ask('Refund 1', { runtime, session, approvals: 'suspend' });
    const refused = await agent.ask('Hello?', { runtime, session });
    expect(refused.outcome).toBe('failed');
    expect(refused.error).toBeInstanceOf(SessionBusyError);
    expect((refused.error as SessionBusyError).reason).toBe('paused');
  });
});

describe('agent.resume()', () => {
  it('approves in another runtime: the tool runs once and the whole turn is written', async () => {
    const { agent, model, execute, store, runtime } = setup([
      { toolCalls: [callRefund('1042')] },
      { text: 'Refunded.' },
      { text: 'You asked for a refund of 1042.' },
    ]);
    const paused = await agent.ask('Refund order 1042', { runtime, session, approvals: 'suspend' });
    const approvalId = paused.pendingApprovals[0]?.approvalId ?? '';

    const elsewhere = createRuntime({ sessionStore: store });
    const stream = agent.streamResume({
      runtime: elsewhere,
      session,
      decisions: { [approvalId]: 'approve' },
    });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    const run = await stream.run;
    expect(run.outcome).toBe('completed');
    expect(run.response).toBe('Refunded.');
    expect(execute).toHaveBeenCalledTimes(1);
    expect(types.slice(0, 3)).toEqual(['run_start', 'run_resume', 'invocation_start']);
    expect(types).toContain('approval_resolved');
    expect(toolResults(model.calls[1])).toMatchObject([{ toolCallId: 'c1', content: 'refunded 1042' }]);

    // The session holds the turn as if it had run at once, and takes new runs again.
    const next = await agent.ask('What did I ask?', { runtime, session });
    expect(next.outcome).toBe('completed');
    expect(model.calls[2]?.messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
    ]);
  });

  it('rejects with a message: the tool never runs and the model reads why', async () => {
    const { agent, model, execute, runtime } = setup([
      { toolCalls: [callRefund('7')] },
      { text: 'Understood.' },
    ]);
    const paused = await agent.ask('Refund 7', { runtime, session, approvals: 'suspend' });
    const approvalId = paused.pendingApprovals[0]?.approvalId ?? '';
    const run = await agent.resume({
      runtime,
      session,
      decisions: { [approvalId]: { reject: 'Order 7 was already refunded' } },
    });
    expect(run.outcome).toBe('completed');
    expect(execute).not.toHaveBeenCalled();
    const [result] = toolResults(model.calls[1]);
    expect(result).toMatchObject({ isError: true });
    expect(result?.content).toMatch(/rejected by a person: Order 7 was already refunded\. It did not run/);
  });

  it('answers partially: runs what was decided, suspends again for the rest, keeps the call order', async () => {
    const { agent, model, execute, runtime } = setup([
      { toolCalls: [callRefund('1', 'c1'), callRefund('2', 'c2')] },
      { text: 'Both done.' },
    ]);
    const paused = await agent.ask('Refund 1 and 2', { runtime, session, approvals: 'suspend' });
    const [first, second] = paused.pendingApprovals;
    const partly = await agent.resume({
      runtime,
      session,
      decisions: { [second?.approvalId ?? '']: 'approve' },
    });
    expect(partly.outcome).toBe('suspended');
    expect(partly.pendingApprovals.map((pending) => pending.approvalId)).toEqual([first?.approvalId]);
    expect(execute).toHaveBeenCalledTimes(1);
    expect(model.calls).toHaveLength(1);

    const done = await agent.resume({
      runtime,
      session,
      decisions: { [first?.approvalId ?? '']: 'approve' },
    });
    expect(done.outcome).toBe('completed');
    expect(execute).toHaveBeenCalledTimes(2);
    expect(
      toolResults(model.calls[1]).map((message) => message.role === 'tool' && message.toolCallId),
    ).toEqual(['c1', 'c2']);
  });

  it('lets exactly one of two concurrent resumes run; the other fails with RunResumeConflictError', async () => {
    const { agent, execute, runtime } = setup([{ toolCalls: [callRefund('9')] }, { text: 'Done.' }]);
    const paused = await agent.ask('Refund 9', { runtime, session, approvals: 'suspend' });
    const decisions = { [paused.pendingApprovals[0]?.approvalId ?? '']: 'approve' as const };
    const runs = await Promise.all([
      agent.resume({ runtime, session, decisions }),
      agent.resume({ runtime, session, decisions }),
    ]);
    expect(runs.map((run) => run.outcome).sort()).toEqual(['completed', 'failed']);
    const loser = runs.find((run) => run.failed);
    expect(loser?.error).toBeInstanceOf(RunResumeConflictError);
    expect(execute).toHaveBeenCalledTimes(1);
    // And once more, later: nothing to resume.
    const late = await agent.resume({ runtime, session, decisions });
    expect(late.error).toBeInstanceOf(RunResumeConflictError);
  });

  it('refuses an approval id the pause does not have, running nothing', async () => {
    const { agent, execute, runtime } = setup([{ toolCalls: [callRefund('3')] }]);
    await agent.ask('Refund 3', { runtime, session, approvals: 'suspend' });
    const run = await agent.resume({ runtime, session, decisions: { 'not-an-id': 'approve' } });
    expect(run.error).toBeInstanceOf(RunResumeConflictError);
    expect((run.error as RunResumeConflictError).approvalIds).toEqual(['not-an-id']);
    expect(execute).not.toHaveBeenCalled();
    expect(() => agent.createRun('x', { runtime, session, decisions: {} } as never)).toThrow(
      /no option 'decisions'/,
    );
    expect(() => agent.createRun('x', { runtime, session, decisions: {} } as never)).toThrow(
      ConfigurationError,
    );
    await expect(agent.resume({ runtime, session, decisions: { a: 'yes' as never } })).rejects.toThrow(
      ConfigurationError,
    );
  });

  it('refuses a resume whose agent changed: another agent, or a tool gone', async () => {
    const { agent, execute, runtime } = setup([{ toolCalls: [callRefund('5')] }]);
    const paused = await agent.ask('Refund 5', { runtime, session, approvals: 'suspend' });
    const decisions = { [paused.pendingApprovals[0]?.approvalId ?? '']: 'approve' as const };
    const renamed = defineAgent({
      name: 'helpdesk',
      model: new ScriptedModel([]),
      tools: [refundTool().tool],
    });
    const wrongAgent = await renamed.resume({ runtime, session, decisions });
    expect(wrongAgent.error).toBeInstanceOf(PausedRunError);
    expect((wrongAgent.error as PausedRunError).missing).toEqual(["agent 'support'"]);

    const withoutRefund = defineAgent({ name: 'support', model: new ScriptedModel([]), tools: [lookup] });
    const toolGone = await withoutRefund.resume({ runtime, session, decisions });
    expect(toolGone.error).toBeInstanceOf(PausedRunError);
    expect((toolGone.error as PausedRunError).code).toBe('PAUSED_RUN_INCOMPATIBLE');
    expect((toolGone.error as PausedRunError).missing).toEqual(["tool 'refund'"]);
    expect(execute).not.toHaveBeenCalled();
    // The pause is still there for the right agent.
    const { tool } = refundTool(execute);
    const fixed = defineAgent({ name: 'support', model: new ScriptedModel([{ text: 'ok' }]), tools: [tool] });
    expect((await fixed.resume({ runtime, session, decisions })).outcome).toBe('completed');
    expect(execute).toHaveBeenCalledTimes(1);
  });

  it('refuses a tampered, truncated or newer-version state with PausedRunError, running nothing', async () => {
    const store = memorySessionStore();
    const { agent, execute, runtime } = setup([{ toolCalls: [callRefund('8')] }], store);
    const paused = await agent.ask('Refund 8', { runtime, session, approvals: 'suspend' });
    const decisions = { [paused.pendingApprovals[0]?.approvalId ?? '']: 'approve' as const };
    const handle = await store.open({ ...session, lockTimeoutMs: 1000 });
    const original = handle.pause ?? '';
    await handle.release();
    const overwrite = async (pause: string, index: number) => {
      const opened = await store.open({ ...session, lockTimeoutMs: 1000 });
      await opened.write({ operationId: `edit-${index}`, digest: `edit-${index}`, messages: [], pause });
      await opened.release();
    };
    const cases: [string, string][] = [
      [original.slice(0, original.length / 2), 'PAUSED_RUN_CORRUPT'],
      [original.replace('"refund"', '"refunD"'), 'PAUSED_RUN_CORRUPT'],
      [original.replace('"version":1', '"version":2'), 'PAUSED_RUN_VERSION'],
    ];
    for (const [index, [pause, code]] of cases.entries()) {
      await overwrite(pause, index);
      const run = await agent.resume({ runtime, session, decisions });
      expect(run.error).toBeInstanceOf(PausedRunError);
      expect((run.error as PausedRunError).code).toBe(code);
    }
    expect(execute).not.toHaveBeenCalled();
    // A state that cannot be read can still be discarded.
    const discarded = await agent.resume({ runtime, session, discard: true });
    expect(discarded.outcome).toBe('completed');
    expect((await store.list({ actor: 'ana' })).sessions[0]?.hasPausedRun).toBe(false);
  });

  it('never runs an approved call twice: a resume stopped while the tool ran leaves it started', async () => {
    let release: () => void = () => {};
    const blocked = new Promise<void>((resolve) => {
      release = resolve;
    });
    const execute = vi.fn<RefundExecute>(async (_input, context) => {
      await Promise.race([
        blocked,
        new Promise((resolve) => context.signal.addEventListener('abort', resolve)),
      ]);
      return 'refunded';
    });
    const { tool } = refundTool(execute);
    const model = new ScriptedModel([{ toolCalls: [callRefund('4')] }, { text: 'Check the refund.' }]);
    const agent = defineAgent({ name: 'support', model, tools: [tool] });
    const runtime = createRuntime({ sessionStore: memorySessionStore() });
    const paused = await agent.ask('Refund 4', { runtime, session, approvals: 'suspend' });
    const decisions = { [paused.pendingApprovals[0]?.approvalId ?? '']: 'approve' as const };

    const controller = new AbortController();
    const stopped = agent.resume({ runtime, session, decisions, signal: controller.signal });
    await vi.waitFor(() => expect(execute).toHaveBeenCalledTimes(1));
    controller.abort(); // as a process dying mid-call would
    expect((await stopped).outcome).toBe('cancelled');
    release();

    const again = await agent.resume({ runtime, session });
    expect(again.outcome).toBe('completed');
    expect(execute).toHaveBeenCalledTimes(1);
    expect(toolResults(model.calls[1])[0]?.content).toMatch(/may or may not have taken effect/);
  });

  it('keeps programs and nested agents waiting in process while the run suspends', async () => {
    const { tool, execute } = refundTool();
    const inner = defineAgent({
      name: 'refunder',
      model: new ScriptedModel([{ toolCalls: [callRefund('6')] }, { text: 'inner done' }]),
      tools: [tool],
    });
    const outer = defineAgent({
      name: 'support',
      model: new ScriptedModel([
        { toolCalls: [{ id: 'n1', name: 'refunder', input: { input: 'Refund 6' } }] },
        { text: 'ok' },
      ]),
      tools: [inner.asTool()],
    });
    const run = outer.createRun('Refund 6', {
      runtime: createRuntime({ sessionStore: memorySessionStore() }),
      session,
      approvals: 'suspend',
    });
    const stream = run.stream();
    for await (const event of stream) {
      if (event.type === 'approval_requested') run.approve(event.data.approvalId);
    }
    expect(run.outcome).toBe('completed');
    expect(execute).toHaveBeenCalledTimes(1);
  });

  it('hands each telemetry plugin back what it kept with the pause, on the resumed run_resume', async () => {
    const seen: { type: string; pausedContext?: unknown }[] = [];
    const keeper: TelemetryV1 = {
      specificationVersion: 'telemetry-v1',
      name: 'keeper',
      startRun: ({ runId }) => ({
        onEvent: (event, detail) => {
          if (event.type === 'run_resume')
            seen.push({ type: event.type, pausedContext: detail.pausedContext });
        },
        runInScope: (_scope, work) => work(),
        pauseContext: () => ({ pausedRun: runId, notAString: 7 as never }),
      }),
    };
    const broken: TelemetryV1 = {
      specificationVersion: 'telemetry-v1',
      name: 'broken',
      startRun: () => ({
        onEvent: () => {},
        runInScope: (_scope, work) => work(),
        pauseContext: () => {
          throw new Error('no context');
        },
      }),
    };
    const store = memorySessionStore();
    const runtime = createRuntime({ sessionStore: store, telemetry: [keeper, broken] });
    const { agent } = setup([{ toolCalls: [callRefund('11')] }, { text: 'Done.' }], store);
    const paused = await agent.ask('Refund 11', { runtime, session, approvals: 'suspend' });
    expect(paused.outcome).toBe('suspended');
    const decisions = { [paused.pendingApprovals[0]?.approvalId ?? '']: 'approve' as const };
    const resumed = await agent.resume({ runtime, session, decisions });
    expect(resumed.outcome).toBe('completed');
    expect(seen).toEqual([{ type: 'run_resume', pausedContext: { pausedRun: paused.operationId } }]);
  });
});
