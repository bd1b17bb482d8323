import { describe, expect, it } from 'vitest';
import { historyItemsOf } from './conversation-history.js';

describe('a stored conversation on the page', () => {
  it('shows questions, answers, each program and the direct tool calls, but not code mode bookkeeping', () => {
    const items = historyItemsOf([
      { role: 'user', content: 'Where is order 1042?' },
      {
        role: 'assistant',
        content: 'Let me look.',
        toolCalls: [{ id: 'c1', name: 'exec', arguments: JSON.stringify({ source: 'text(1)' }) }],
      },
      { role: 'tool', toolCallId: 'c1', toolName: 'exec', content: '{"status":"still_working"}' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c2', name: 'wait', arguments: '{}' }] },
      { role: 'tool', toolCallId: 'c2', toolName: 'wait', content: '{"status":"completed","output":"1"}' },
      { role: 'assistant', content: 'It shipped.' },
      { role: 'user', content: [{ type: 'text', text: 'Refund it.' }] },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c3', name: 'refund_order', arguments: '{}' }] },
      {
        role: 'tool',
        toolCallId: 'c3',
        toolName: 'refund_order',
        content: 'Rejected by the person.',
        isError: true,
      },
    ]);
    expect(items).toEqual([
      { kind: 'user', text: 'Where is order 1042?' },
      { kind: 'assistant', text: 'Let me look.' },
      { kind: 'program', source: 'text(1)' },
      { kind: 'assistant', text: 'It shipped.' },
      { kind: 'user', text: 'Refund it.' },
      { kind: 'tool', name: 'refund_order', isError: true },
    ]);
  });
});
