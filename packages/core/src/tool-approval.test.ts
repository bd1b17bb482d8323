import Type from 'typebox';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defineAgent } from './agent.js';
import { ApprovalError, ConfigurationError } from './errors.js';
import type { ModelRequest } from './model.js';
import { createRuntime } from './runtime.js';
import type { StreamEvent } from './stream-event.js';
import type { TelemetryV1 } from './telemetry.js';
import { countOpenHandles, newOpenHandles } from './testing/open-handles.js';
import { ScriptedModel } from './testing/scripted-model.js';
import { defineTool, type ToolNeedsApproval } from './tool.js';

const runtime = createRuntime();

let handlesBefore: Map<string, number>;
beforeEach(() => {
  handlesBefore = countOpenHandles();
});
afterEach(async () => {
  expect(await newOpenHandles(handlesBefore)).toEqual([]);
});

/** The tool results the model read on its `call`-th request. */
function toolResults(requests: readonly ModelRequest[], call: number) {
  return (requests[call]?.messages ?? []).filter((message) => message.role === 'tool');
}

/** Waits (in real time) until `check` returns something other than undefined or false. */
async function until<Value>(check: () => Value | undefined | false, timeoutMs = 2_000): Promise<Value> {
  const started = Date.now();
  for (;;) {
    const value = check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() - started > timeoutMs) throw new Error('until: timed out');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

function sendEmailTool(needsApproval: ToolNeedsApproval | undefined = true) {
  const execute = vi.fn(async (input: { to: string }) => `sent to ${input.to}`);
  const tool = defineTool({
    name: 'send_email',
    description: 'Sends an email.',
    input: Type.Object({ to: Type.String() }),
    execute,
    ...(needsApproval === undefined ? {} : { needsApproval }),
  });
  return { tool, execute };
}

const callEmail = (to: string, id = 'c1') => ({ toolCalls: [{ id, name: 'send_email', input: { to } }] });

function emailAgent(
  needsApproval: ToolNeedsApproval | undefined = true,
  script: ConstructorParameters<typeof ScriptedModel>[0] = [callEmail('ana@example.com'), { text: 'Done.' }],
  limits: { approvalTimeoutMs?: number } = {},
) {
  const { tool, execute } = sendEmailTool(needsApproval);
  const model = new ScriptedModel(script);
  const agent = defineAgent({ name: 'mailer', model, tools: [tool], limits });
  return { agent, model, execute };
}

function eventsOf(events: readonly StreamEvent[], ...types: string[]) {
  return events.filter((event) => types.includes(event.type));
}

describe('defineTool({ needsApproval })', () => {
  it('accepts a boolean or a function and refuses anything else', () => {
    expect(sendEmailTool(true).tool.needsApproval).toBe(true);
    expect(typeof sendEmailTool(() => true).tool.needsApproval).toBe('function');
    expect(() => sendEmailTool('yes' as never)).toThrow(ConfigurationError);
    try {
      sendEmailTool(1 as never);
    } catch (error) {
      expect((error as ConfigurationError).code).toBe('TOOL_NEEDS_APPROVAL_INVALID');
    }
  });

  it('checks limits.approvalTimeoutMs like the other limits', () => {
    expect(() =>
      defineAgent({ name: 'a', model: new ScriptedModel([]), limits: { approvalTimeoutMs: 0 } }),
    ).toThrow(ConfigurationError);
  });
});

describe('tool approvals', () => {
  it('runs the call once it is approved, after approval_requested and approval_resolved', async () => {
    const { agent, execute } = emailAgent();
    const run = agent.createRun('Email Ana.', { runtime });
    const events: StreamEvent[] = [];
    const stream = run.stream();
    for await (const event of stream) {
      events.push(event);
      if (event.type === 'approval_requested') {
        expect(run.pendingApprovals).toEqual([event.data]);
        expect(Object.isFrozen(run.pendingApprovals)).toBe(true);
        expect(execute).not.toHaveBeenCalled();
        run.approve(event.data.approvalId);
        expect(run.pendingApprovals).toEqual([]);
      }
    }
    await stream.run;
    expect(run.outcome).toBe('completed');
    expect(execute).toHaveBeenCalledTimes(1);
    const [requested, resolved] = eventsOf(events, 'approval_requested', 'approval_resolved');
    expect(requested?.type).toBe('approval_requested');
    expect(requested?.data).toMatchObject({
      toolCallId: 'c1',
      toolName: 'send_email',
      input: { to: 'ana@example.com' },
      agentName: 'mailer',
    });
    expect(requested?.data).not.toHaveProperty('path');
    const approvalId = (requested?.data as { approvalId: string } | undefined)?.approvalId ?? '';
    expect(approvalId).toMatch(/^[0-9a-f-]{36}$/);
    expect(resolved?.data).toEqual({
      approvalId,
      toolCallId: 'c1',
      toolName: 'send_email',
      decision: 'approved',
    });
    // Requested after the call started, resolved before it stopped.
    const order = events.map((event) => event.type).filter((type) => /^(tool_st|approval_)/.test(type));
    expect(order).toEqual(['tool_start', 'approval_requested', 'approval_resolved', 'tool_stop']);
    expect(() => run.approve(approvalId)).toThrow(ApprovalError);
  });

  it('never runs a rejected call, and the model reads the rejection and its message', async () => {
    const { agent, model, execute } = emailAgent();
    const run = agent.createRun('Email Ana.', { runtime });
    const executed = run.execute();
    const [pending] = await until(() => run.pendingApprovals.length === 1 && run.pendingApprovals);
    run.reject(pending?.approvalId ?? '', { message: 'Ana is on leave' });
    await executed;
    expect(run.outcome).toBe('completed');
    expect(execute).not.toHaveBeenCalled();
    const [result] = toolResults(model.calls, 1);
    expect(result?.isError).toBe(true);
    expect(result?.content).toBe(
      'The call to send_email was rejected by a person: Ana is on leave. It did not run. Do not retry it unless asked.',
    );
  });

  it('rejects a call no one answers within approvalTimeoutMs as timed_out', async () => {
    const { agent, model, execute } = emailAgent(true, undefined, { approvalTimeoutMs: 30 });
    const events: StreamEvent[] = [];
    const stream = agent.streamAsk('Email Ana.', { runtime });
    for await (const event of stream) events.push(event);
    const run = await stream.run;
    expect(run.outcome).toBe('completed');
    expect(execute).not.toHaveBeenCalled();
    expect(eventsOf(events, 'approval_resolved')[0]?.data).toMatchObject({ decision: 'timed_out' });
    const [result] = toolResults(model.calls, 1);
    expect(result?.content).toBe(
      'No one approved the call to send_email within 0.03 seconds, so it did not run. Do not retry it unless asked.',
    );
    const stop = eventsOf(events, 'tool_stop')[0];
    expect(stop?.data).toMatchObject({
      status: 'error',
      error: { name: 'ApprovalError', code: 'APPROVAL_TIMED_OUT' },
    });
  });

  it('asks a predicate with the validated input; true waits, false runs, a throw waits (fail closed)', async () => {
    const seen: unknown[] = [];
    const predicate = (input: unknown, context: { toolCallId: string; actorId: string | undefined }) => {
      seen.push({ input, toolCallId: context.toolCallId, actorId: context.actorId });
      return (input as { to: string }).to.endsWith('@outside.com');
    };
    const inside = emailAgent(predicate);
    const insideRun = await inside.agent.ask('Email Ana.', { runtime, actorId: 'u1' });
    expect(insideRun.outcome).toBe('completed');
    expect(inside.execute).toHaveBeenCalledTimes(1);
    expect(seen).toEqual([{ input: { to: 'ana@example.com' }, toolCallId: 'c1', actorId: 'u1' }]);

    const outside = emailAgent(predicate, [callEmail('bo@outside.com'), { text: 'Done.' }], {
      approvalTimeoutMs: 20,
    });
    await outside.agent.ask('Email Bo.', { runtime });
    expect(outside.execute).not.toHaveBeenCalled();

    const throwing = emailAgent(
      async () => {
        throw new Error('policy service down');
      },
      undefined,
      { approvalTimeoutMs: 20 },
    );
    const throwingRun = throwing.agent.createRun('Email Ana.', { runtime });
    const executed = throwingRun.execute();
    await until(() => throwingRun.pendingApprovals.length === 1);
    throwingRun.approve(throwingRun.pendingApprovals[0]?.approvalId ?? '');
    await executed;
    expect(throwing.execute).toHaveBeenCalledTimes(1);
  });

  it('is not asked for input that fails validation', async () => {
    const predicate = vi.fn(() => true);
    const { agent, execute } = emailAgent(predicate, [
      { toolCalls: [{ id: 'c1', name: 'send_email', input: { to: 7 } }] },
      { text: 'Sorry.' },
    ]);
    const run = await agent.ask('Email Ana.', { runtime });
    expect(run.outcome).toBe('completed');
    expect(predicate).not.toHaveBeenCalled();
    expect(execute).not.toHaveBeenCalled();
  });

  it('keeps several approvals pending and answers them in any order, partially', async () => {
    const { agent, model, execute } = emailAgent(true, [
      {
        toolCalls: [
          { id: 'c1', name: 'send_email', input: { to: 'a@x.com' } },
          { id: 'c2', name: 'send_email', input: { to: 'b@x.com' } },
        ],
      },
      { text: 'Done.' },
    ]);
    const run = agent.createRun('Email both.', { runtime });
    const executed = run.execute();
    const pending = await until(() => run.pendingApprovals.length === 2 && run.pendingApprovals);
    const first = pending.find((entry) => entry.toolCallId === 'c1');
    const second = pending.find((entry) => entry.toolCallId === 'c2');
    run.approve(second?.approvalId ?? '');
    await until(() => execute.mock.calls.length === 1);
    expect(run.pendingApprovals.map((entry) => entry.toolCallId)).toEqual(['c1']);
    expect(execute.mock.calls[0]?.[0]).toEqual({ to: 'b@x.com' });
    run.reject(first?.approvalId ?? '');
    await executed;
    expect(execute).toHaveBeenCalledTimes(1);
    const results = toolResults(model.calls, 1);
    expect(results.map((result) => [result.toolCallId, result.isError === true])).toEqual([
      ['c1', true],
      ['c2', false],
    ]);
    expect(results[0]?.content).toBe(
      'The call to send_email was rejected by a person. It did not run. Do not retry it unless asked.',
    );
  });

  it('throws APPROVAL_UNKNOWN for an id that is not pending', async () => {
    const { agent } = emailAgent(false, [{ text: 'Hi.' }]);
    const run = agent.createRun('Hi.', { runtime });
    expect(() => run.approve('nope')).toThrow(ApprovalError);
    try {
      run.reject('nope');
      expect.unreachable();
    } catch (error) {
      expect(ApprovalError.isInstance(error)).toBe(true);
      expect((error as ApprovalError).code).toBe('APPROVAL_UNKNOWN');
      expect((error as ApprovalError).message).toMatch(/no approval with this id is pending/);
    }
    await run.execute();
  });

  it('ends the wait as cancelled when the run is cancelled, promptly and without leaks', async () => {
    const { agent, execute } = emailAgent();
    const controller = new AbortController();
    const events: StreamEvent[] = [];
    const stream = agent.streamAsk('Email Ana.', { runtime, signal: controller.signal });
    const started = Date.now();
    for await (const event of stream) {
      events.push(event);
      if (event.type === 'approval_requested') controller.abort();
    }
    const run = await stream.run;
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(run.outcome).toBe('cancelled');
    expect(execute).not.toHaveBeenCalled();
    expect(run.pendingApprovals).toEqual([]);
    expect(eventsOf(events, 'approval_resolved')[0]?.data).toMatchObject({ decision: 'cancelled' });
  });

  it('does not count the wait against the tool’s own timeoutMs', async () => {
    const execute = vi.fn(async () => 'ok');
    const tool = defineTool({
      name: 'slow_gate',
      description: 'x',
      input: Type.Object({}),
      timeoutMs: 20,
      needsApproval: true,
      execute,
    });
    const model = new ScriptedModel([
      { toolCalls: [{ id: 'c1', name: 'slow_gate', input: {} }] },
      { text: 'Done.' },
    ]);
    const run = defineAgent({ name: 'a', model, tools: [tool] }).createRun('Go.', { runtime });
    const executed = run.execute();
    await until(() => run.pendingApprovals.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 60));
    run.approve(run.pendingApprovals[0]?.approvalId ?? '');
    await executed;
    expect(execute).toHaveBeenCalledTimes(1);
    expect(toolResults(model.calls, 1)[0]?.content).toBe('ok');
  });

  it('surfaces an approval of an agent run as a tool on the outer run, with its path', async () => {
    const { tool, execute } = sendEmailTool(true);
    const inner = defineAgent({
      name: 'assistant',
      model: new ScriptedModel([callEmail('ana@example.com', 'inner-1'), { text: 'Emailed.' }]),
      tools: [tool],
    });
    const outerModel = new ScriptedModel([
      { toolCalls: [{ id: 'outer-1', name: 'assistant', input: { input: 'Email Ana.' } }] },
      { text: 'All done.' },
    ]);
    const outer = defineAgent({ name: 'boss', model: outerModel, tools: [inner.asTool()] });
    const run = outer.createRun('Get Ana emailed.', { runtime });
    const events: StreamEvent[] = [];
    const stream = run.stream();
    for await (const event of stream) {
      events.push(event);
      if (event.type === 'approval_requested') run.approve(event.data.approvalId);
    }
    await stream.run;
    expect(run.outcome).toBe('completed');
    expect(execute).toHaveBeenCalledTimes(1);
    // Without includeAgentEvents, the nested approval still comes on the run's own stream.
    expect(events.some((event) => event.type === 'agent_stream')).toBe(false);
    const requested = eventsOf(events, 'approval_requested')[0];
    expect(requested?.data).toMatchObject({ toolCallId: 'inner-1', agentName: 'assistant' });
    const path = (requested?.data as { path?: readonly string[] } | undefined)?.path;
    expect(path?.slice(0, 2)).toEqual(['tool:outer-1', 'assistant']);
    expect(path).toHaveLength(3);
    expect(eventsOf(events, 'approval_resolved')[0]?.data).toMatchObject({ decision: 'approved' });
    expect(toolResults(outerModel.calls, 1)[0]?.content).toBe('Emailed.');
  });
  it('leaves no timer behind when an observer approves while the request is announced', async () => {
    const { agent, execute } = emailAgent();
    let run: ReturnType<typeof agent.createRun> | undefined;
    const approver: TelemetryV1 = {
      specificationVersion: 'telemetry-v1',
      name: 'approver',
      startRun: () => ({
        onEvent: (event) => {
          if (event.type === 'approval_requested') run?.approve(event.data.approvalId);
        },
        runInScope: (_scope, work) => work(),
      }),
    };
    run = agent.createRun('Email Ana.', { runtime: createRuntime({ telemetry: approver }) });
    await run.execute();
    expect(run.outcome).toBe('completed');
    expect(execute).toHaveBeenCalledTimes(1);
    // The afterEach check fails on the approval's timer if answering it synchronously leaked it.
  });
});

describe('tool approvals and the run’s limits', () => {
  it('ends the wait at the run’s deadline (decision cancelled, outcome partial)', async () => {
    const { agent, execute } = emailAgent();
    const events: StreamEvent[] = [];
    const stream = agent.streamAsk('Email Ana.', { runtime, timeoutMs: 50 });
    for await (const event of stream) events.push(event);
    const run = await stream.run;
    expect(run.outcome).toBe('partial');
    expect(execute).not.toHaveBeenCalled();
    expect(eventsOf(events, 'approval_resolved')[0]?.data).toMatchObject({ decision: 'cancelled' });
  });

  it('surfaces a subagent’s approval on the run, placed under subagent:<task_name>', async () => {
    const { tool, execute } = sendEmailTool(true);
    const helper = defineAgent({
      name: 'helper',
      model: new ScriptedModel([callEmail('ana@example.com', 'sub-1'), { text: 'Emailed.' }]),
      tools: [tool],
    });
    const lead = defineAgent({
      name: 'lead',
      model: new ScriptedModel([
        {
          toolCalls: [
            {
              id: 'spawn-1',
              name: 'spawn_subagent',
              input: { kind: 'helper', task_name: 'mail', task: 'Email Ana.', mode: 'sync' },
            },
          ],
        },
        { text: 'Done.' },
      ]),
      subagents: [{ agent: helper, description: 'Sends emails.' }],
    });
    const run = lead.createRun('Get Ana emailed.', { runtime });
    const events: StreamEvent[] = [];
    const stream = run.stream();
    for await (const event of stream) {
      events.push(event);
      if (event.type === 'approval_requested') run.reject(event.data.approvalId, { message: 'Not today!' });
    }
    await stream.run;
    expect(run.outcome).toBe('completed');
    expect(execute).not.toHaveBeenCalled();
    const requested = eventsOf(events, 'approval_requested')[0]?.data as {
      path?: string[];
      agentName: string;
    };
    expect(requested.agentName).toBe('helper');
    expect(requested.path?.[0]).toMatch(/^subagent:mail/);
    expect(eventsOf(events, 'approval_resolved')[0]?.data).toMatchObject({
      decision: 'rejected',
      message: 'Not today!',
    });
  });
});
