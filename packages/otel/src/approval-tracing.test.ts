import { createRuntime, defineAgent, defineTool, memorySessionStore } from '@ghost/core';
import { ScriptedModel } from '@ghost/core/testing';
import { SpanStatusCode } from '@opentelemetry/api';
import Type from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTelemetry } from './open-telemetry.js';
import { inMemoryTracing, onlySpan, useAsyncContext } from './test-support/in-memory-tracing.js';

let stopAsyncContext: () => void;
beforeAll(() => {
  stopAsyncContext = useAsyncContext();
});
afterAll(() => stopAsyncContext());

describe('a tool call waiting for a person, traced', () => {
  it('records the request and the decision as span events of the waiting call', async () => {
    const tracing = inMemoryTracing();
    const runtime = createRuntime({ telemetry: openTelemetry({ tracerProvider: tracing.provider }) });
    const sendEmail = defineTool({
      name: 'send_email',
      description: 'Sends an email.',
      input: Type.Object({ to: Type.String() }),
      needsApproval: true,
      execute: ({ to }) => `sent to ${to}`,
    });
    const agent = defineAgent({
      name: 'mailer',
      model: new ScriptedModel([
        { toolCalls: [{ id: 'call_1', name: 'send_email', input: { to: 'ana@example.com' } }] },
        { text: 'Not sent.' },
      ]),
      tools: [sendEmail],
    });
    const run = agent.createRun('Email Ana.', { runtime });
    let approvalId = '';
    for await (const event of run.stream()) {
      if (event.type === 'approval_requested') {
        approvalId = event.data.approvalId;
        run.reject(approvalId, { message: 'Not today.' });
      }
    }
    expect(run.outcome).toBe('completed');
    const span = onlySpan(tracing.finished(), 'execute_tool send_email');
    expect(span.events.map((event) => [event.name, event.attributes])).toEqual([
      ['ghost.approval.requested', { 'ghost.approval.id': approvalId }],
      ['ghost.approval.resolved', { 'ghost.approval.id': approvalId, 'ghost.approval.decision': 'rejected' }],
    ]);
  });

  it("ends a suspended run's span with the pause, and names the paused run on the resumed one", async () => {
    const tracing = inMemoryTracing();
    const runtime = createRuntime({
      telemetry: openTelemetry({ tracerProvider: tracing.provider }),
      sessionStore: memorySessionStore(),
    });
    const refund = defineTool({
      name: 'refund',
      description: 'Refunds an order.',
      input: Type.Object({ order: Type.String() }),
      needsApproval: true,
      execute: ({ order }) => `refunded ${order}`,
    });
    const agent = defineAgent({
      name: 'support',
      model: new ScriptedModel([
        { toolCalls: [{ id: 'call_1', name: 'refund', input: { order: '1042' } }] },
        { text: 'Refunded.' },
      ]),
      tools: [refund],
    });
    const session = { id: 'ticket-7', actor: 'ana' };
    const paused = await agent.ask('Refund 1042', { runtime, session, approvals: 'suspend' });
    const approvalId = paused.pendingApprovals[0]?.approvalId ?? '';
    const resumed = await agent.resume({ runtime, session, decisions: { [approvalId]: 'approve' } });
    expect(resumed.outcome).toBe('completed');

    const [pausedSpan, resumedSpan] = tracing
      .finished()
      .filter((span) => span.name === 'invoke_agent support');
    expect(pausedSpan?.attributes['ghost.run.outcome']).toBe('suspended');
    const suspendedEvent = pausedSpan?.events.find((event) => event.name === 'ghost.run.suspended');
    expect(suspendedEvent?.attributes?.['ghost.approval.ids']).toEqual([approvalId]);
    const pauseId = suspendedEvent?.attributes?.['ghost.pause.id'];
    expect(resumedSpan?.attributes).toMatchObject({
      'ghost.run.outcome': 'completed',
      'ghost.run.resumed_from': paused.operationId,
      'ghost.run.first_id': paused.operationId,
      'ghost.pause.id': pauseId,
    });
    expect(resumedSpan?.events.map((event) => event.name)).toContain('ghost.run.resumed');
    // A span link from the resumed run to the paused one, across traces.
    expect(resumedSpan?.links.map((link) => link.context.spanId)).toEqual([pausedSpan?.spanContext().spanId]);
    expect(resumedSpan?.links[0]?.context.traceId).toBe(pausedSpan?.spanContext().traceId);
    // The waiting call's span ends without failing; the resumed run's own span runs it.
    const [waited, ran] = tracing.finished().filter((span) => span.name === 'execute_tool refund');
    expect(waited?.status.code).not.toBe(SpanStatusCode.ERROR);
    expect(waited?.events.map((event) => event.name)).toEqual(['ghost.approval.suspended']);
    expect(ran?.parentSpanContext?.spanId).toBe(resumedSpan?.spanContext().spanId);
  });
});
