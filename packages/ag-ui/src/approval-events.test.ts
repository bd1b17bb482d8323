import { type Event as AgUiEvent, EventType } from '@ag-ui/core';
import { defineAgent, defineTool } from '@ghost/core';
import { ScriptedModel } from '@ghost/core/testing';
import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { AgUiEventMapper } from './ag-ui-event-mapper.js';
import { checkedEvents, ofType } from './test-support/checked-events.js';

describe('a tool call waiting for a person, as AG-UI events', () => {
  it('sends ghost.approval_requested a UI can render, then ghost.approval_resolved with the decision', async () => {
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
        { text: 'Sent.' },
      ]),
      tools: [sendEmail],
    });
    const run = agent.createRun('Email Ana.');
    const mapper = new AgUiEventMapper({ threadId: 'thread-1' });
    const out: AgUiEvent[] = [];
    for await (const event of run.stream()) {
      out.push(...mapper.map(event));
      if (event.type === 'approval_requested') run.approve(event.data.approvalId);
    }
    out.push(...mapper.finish(run));
    const events = await checkedEvents(out);
    const custom = ofType(events, EventType.CUSTOM).filter((event) =>
      event.name.startsWith('ghost.approval'),
    );
    expect(custom.map((event) => event.name)).toEqual([
      'ghost.approval_requested',
      'ghost.approval_resolved',
    ]);
    expect(custom[0]?.value).toMatchObject({
      toolCallId: 'call_1',
      toolName: 'send_email',
      input: { to: 'ana@example.com' },
      agentName: 'mailer',
    });
    expect(custom[1]?.value).toMatchObject({ toolCallId: 'call_1', decision: 'approved' });
    expect(ofType(events, EventType.TOOL_CALL_RESULT)[0]?.content).toContain('sent to ana@example.com');
  });
});
