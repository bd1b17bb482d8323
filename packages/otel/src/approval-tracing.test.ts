import { createRuntime, defineAgent, defineTool } from '@ghost/core';
import { ScriptedModel } from '@ghost/core/testing';
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
});
