import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpAgent, type RunAgentParameters } from '@ag-ui/client';
import { type Event as AgUiEvent, EventType, type Message } from '@ag-ui/core';
import { createRuntime, defineAgent, defineTool, memorySessionStore } from '@ghost/core';
import { ScriptedModel } from '@ghost/core/testing';
import Type from 'typebox';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type AgUiHandlerOptions, agUiHandler } from './ag-ui-handler.js';
import { checkedEvents, ofType } from './test-support/checked-events.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  }
});

type RefundExecute = (input: { order: string }) => Promise<string>;

/** An agent whose `refund` tool needs approval, served with sessions on a loopback port. */
async function serveRefunds(
  script: ConstructorParameters<typeof ScriptedModel>[0],
  options: AgUiHandlerOptions = {},
  { withSessions = true } = {},
) {
  const execute = vi.fn<RefundExecute>(async (input) => `refunded ${input.order}`);
  const refund = defineTool({
    name: 'refund',
    description: 'Refunds an order.',
    input: Type.Object({ order: Type.String() }),
    execute,
    needsApproval: true,
  });
  const model = new ScriptedModel(script);
  const agent = defineAgent({ name: 'support', model, tools: [refund] });
  const runtime = createRuntime({ sessionStore: memorySessionStore() });
  const handler = agUiHandler(agent, {
    askOptions: () => ({ runtime }),
    ...(withSessions ? { actor: ({ request }) => String(request.headers['x-user'] ?? 'anonymous') } : {}),
    ...options,
  });
  const handled: Promise<void>[] = [];
  const server = createServer((request, response) => void handled.push(handler(request, response)));
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const client = new HttpAgent({
    url: `http://127.0.0.1:${port}/agent`,
    threadId: 'thread-1',
    headers: { 'x-user': 'ana' },
  });
  return {
    client,
    model,
    execute,
    url: `http://127.0.0.1:${port}/agent`,
    settled: () => Promise.all(handled),
  };
}

/**
 * Runs the client once, recording (and checking, as the client does) every event it received.
 * The client verifies the stream itself too: a run it refuses fails the test.
 */
async function runClient(client: HttpAgent, parameters: RunAgentParameters = {}) {
  const events: AgUiEvent[] = [];
  await client.runAgent(parameters, { onEvent: ({ event }) => void events.push(event as AgUiEvent) });
  return checkedEvents(events);
}

function userMessage(id: string, content: string): Message {
  return { id, role: 'user', content };
}

const callRefund = (order: string, id = 'c1') => ({ id, name: 'refund', input: { order } });

function finishedOf(events: readonly AgUiEvent[]) {
  const [finished] = ofType(events, EventType.RUN_FINISHED);
  return finished;
}

function interruptIdsOf(events: readonly AgUiEvent[]): string[] {
  const outcome = finishedOf(events)?.outcome;
  return outcome?.type === 'interrupt' ? outcome.interrupts.map((interrupt) => interrupt.id) : [];
}

function errorCodesOf(events: readonly AgUiEvent[]) {
  return ofType(events, EventType.RUN_ERROR).map((event) => event.code);
}

function toolResultsSeen(model: ScriptedModel, call: number) {
  return (model.calls[call]?.messages ?? []).filter((message) => message.role === 'tool');
}

describe('agUiHandler approvals over AG-UI interrupts', () => {
  it('ends a run that needs approval with one interrupt per pending call; resuming with approved: true runs the tool once, and the thread goes on', async () => {
    const served = await serveRefunds([
      { toolCalls: [callRefund('1042', 'c1'), callRefund('1043', 'c2')] },
      { text: 'Both refunded.' },
      { text: 'You are welcome.' },
    ]);
    served.client.messages.push(userMessage('u1', 'Refund 1042 and 1043.'));
    const first = await runClient(served.client);
    const interruptIds = interruptIdsOf(first);
    expect(interruptIds).toHaveLength(2);
    const outcome = finishedOf(first)?.outcome;
    expect(outcome?.type === 'interrupt' && outcome.interrupts.map((interrupt) => interrupt.reason)).toEqual([
      'tool_approval',
      'tool_approval',
    ]);
    expect(served.client.pendingInterrupts.map((interrupt) => interrupt.id)).toEqual(interruptIds);
    expect(served.execute).not.toHaveBeenCalled();

    const second = await runClient(served.client, {
      resume: interruptIds.map((interruptId) => ({
        interruptId,
        status: 'resolved' as const,
        payload: { approved: true },
      })),
    });
    expect(errorCodesOf(second)).toEqual([]);
    expect(finishedOf(second)?.outcome).toEqual({ type: 'success' });
    expect(served.execute).toHaveBeenCalledTimes(2);
    // The client sent its whole thread again: a resume continues the paused turn, adding no input.
    expect(served.model.calls[1]?.messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'tool',
    ]);
    expect(ofType(second, EventType.TOOL_CALL_RESULT).map((event) => event.toolCallId)).toEqual(['c1', 'c2']);
    expect(served.client.pendingInterrupts).toEqual([]);

    served.client.messages.push(userMessage('u2', 'Thanks!'));
    const third = await runClient(served.client);
    expect(finishedOf(third)?.outcome).toEqual({ type: 'success' });
    expect(served.model.calls[2]?.messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'tool',
      'assistant',
      'user',
    ]);
    expect(served.execute).toHaveBeenCalledTimes(2);
    await served.settled();
  });

  it('rejects a call answered with approved: false, and the model reads the message', async () => {
    const served = await serveRefunds([{ toolCalls: [callRefund('1042')] }, { text: 'Not refunded.' }]);
    served.client.messages.push(userMessage('u1', 'Refund 1042.'));
    const [interruptId = ''] = interruptIdsOf(await runClient(served.client));
    const second = await runClient(served.client, {
      resume: [
        { interruptId, status: 'resolved', payload: { approved: false, message: 'Ask the manager first.' } },
      ],
    });
    expect(finishedOf(second)?.outcome).toEqual({ type: 'success' });
    expect(served.execute).not.toHaveBeenCalled();
    expect(JSON.stringify(toolResultsSeen(served.model, 1))).toContain('Ask the manager first.');
    await served.settled();
  });

  it('rejects a dismissed (cancelled) interrupt, saying the person dismissed it', async () => {
    const served = await serveRefunds([{ toolCalls: [callRefund('1042')] }, { text: 'Not refunded.' }]);
    served.client.messages.push(userMessage('u1', 'Refund 1042.'));
    const [interruptId = ''] = interruptIdsOf(await runClient(served.client));
    const second = await runClient(served.client, { resume: [{ interruptId, status: 'cancelled' }] });
    expect(finishedOf(second)?.outcome).toEqual({ type: 'success' });
    expect(served.execute).not.toHaveBeenCalled();
    expect(JSON.stringify(toolResultsSeen(served.model, 1))).toContain('dismissed');
    await served.settled();
  });

  it('ends a stale or repeated resume with RUN_ERROR RUN_RESUME_CONFLICT, and the tool does not run again', async () => {
    const served = await serveRefunds([{ toolCalls: [callRefund('1042')] }, { text: 'Refunded.' }]);
    served.client.messages.push(userMessage('u1', 'Refund 1042.'));
    const [interruptId = ''] = interruptIdsOf(await runClient(served.client));
    const resume = [{ interruptId, status: 'resolved' as const, payload: { approved: true } }];
    await runClient(served.client, { resume });
    expect(served.execute).toHaveBeenCalledTimes(1);
    const repeated = await runClient(served.client, { resume });
    expect(errorCodesOf(repeated)).toEqual(['RUN_RESUME_CONFLICT']);
    expect(served.execute).toHaveBeenCalledTimes(1);
    expect(served.model.calls).toHaveLength(2);
    await served.settled();
  });

  it('ends a new (non-resume) request on a thread with a pending approval with RUN_ERROR SESSION_BUSY', async () => {
    const served = await serveRefunds([{ toolCalls: [callRefund('1042')] }]);
    served.client.messages.push(userMessage('u1', 'Refund 1042.'));
    await runClient(served.client);
    // The same client would not send it (its pending interrupts are unanswered); another device would.
    const other = new HttpAgent({ url: served.url, threadId: 'thread-1', headers: { 'x-user': 'ana' } });
    other.messages.push(userMessage('u2', 'Hello?'));
    const second = await runClient(other);
    expect(errorCodesOf(second)).toEqual(['SESSION_BUSY']);
    expect(served.model.calls).toHaveLength(1);
    await served.settled();
  });

  it('refuses a resume whose payload is no approval answer with 400, and runs nothing', async () => {
    const served = await serveRefunds([{ toolCalls: [callRefund('1042')] }]);
    served.client.messages.push(userMessage('u1', 'Refund 1042.'));
    const [interruptId = ''] = interruptIdsOf(await runClient(served.client));
    const response = await fetch(served.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream', 'x-user': 'ana' },
      body: JSON.stringify({
        threadId: 'thread-1',
        runId: 'run-2',
        messages: [],
        tools: [],
        context: [],
        state: {},
        forwardedProps: {},
        resume: [{ interruptId, status: 'resolved', payload: { approved: 'yes' } }],
      }),
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('AG_UI_REQUEST_INVALID');
    expect(body.error.message).toContain('{ approved: true }');
    expect(served.execute).not.toHaveBeenCalled();
    await served.settled();
  });

  it('takes a resume that carries no messages: the session holds the thread', async () => {
    const served = await serveRefunds([{ toolCalls: [callRefund('1042')] }, { text: 'Refunded.' }]);
    served.client.messages.push(userMessage('u1', 'Refund 1042.'));
    const [interruptId = ''] = interruptIdsOf(await runClient(served.client));
    const response = await fetch(served.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream', 'x-user': 'ana' },
      body: JSON.stringify({
        threadId: 'thread-1',
        runId: 'run-2',
        messages: [],
        tools: [],
        context: [],
        state: {},
        forwardedProps: {},
        resume: [{ interruptId, status: 'resolved', payload: { approved: true } }],
      }),
    });
    expect(response.status).toBe(200);
    const stream = await response.text();
    expect(stream).toContain('"type":"RUN_FINISHED"');
    expect(stream).not.toContain('RUN_ERROR');
    expect(served.execute).toHaveBeenCalledTimes(1);
    await served.settled();
  });

  it('refuses a resume with 400 when the handler keeps no sessions', async () => {
    const served = await serveRefunds([], { approvals: 'wait' }, { withSessions: false });
    const response = await fetch(served.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      body: JSON.stringify({
        threadId: 'thread-1',
        runId: 'run-1',
        messages: [],
        tools: [],
        context: [],
        state: {},
        forwardedProps: {},
        resume: [{ interruptId: 'approval-1', status: 'resolved', payload: { approved: true } }],
      }),
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('AG_UI_REQUEST_INVALID');
    expect(body.error.message).toContain('keeps no sessions');
    expect(served.execute).not.toHaveBeenCalled();
    await served.settled();
  });

  it("keeps the run waiting in the server with approvals: 'wait' (no interrupt), and refuses 'suspend' without sessions", async () => {
    const runtime = createRuntime({ sessionStore: memorySessionStore() });
    const served = await serveRefunds([{ toolCalls: [callRefund('1042')] }], {
      approvals: 'wait',
      // Nobody answers in the server here, so the run's time runs out while it waits.
      askOptions: () => ({ runtime, timeoutMs: 300 }),
    });
    served.client.messages.push(userMessage('u1', 'Refund 1042.'));
    const events = await runClient(served.client);
    expect(errorCodesOf(events)).toEqual(['RUN_DEADLINE_EXCEEDED']);
    expect(
      ofType(events, EventType.CUSTOM)
        .map((event) => event.name)
        .filter((name) => name.startsWith('ghost.approval')),
    ).toContain('ghost.approval_requested');
    expect(interruptIdsOf(events)).toEqual([]);
    expect(served.execute).not.toHaveBeenCalled();
    await served.settled();
    const agent = defineAgent({ name: 'support', model: new ScriptedModel([]) });
    expect(() => agUiHandler(agent, { approvals: 'suspend' })).toThrow(/actor/);
  });
});
