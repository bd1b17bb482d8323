import type { Message } from '@ag-ui/core';
import { GhostError } from '@ghost/core';
import { describe, expect, it } from 'vitest';
import { AgUiRequestError } from './ag-ui-request-error.js';
import {
  conversationFromAgUi,
  unansweredToolCallResult,
  withheldToolResult,
} from './conversation-from-ag-ui.js';

function refusalOf(messages: Message[], options = {}): AgUiRequestError {
  try {
    conversationFromAgUi(messages, options);
  } catch (error) {
    if (AgUiRequestError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

const call = (id: string, name: string, args: object, metadata?: object) => ({
  id,
  type: 'function' as const,
  function: { name, arguments: JSON.stringify(args) },
  ...(metadata === undefined ? {} : { metadata }),
});

describe('conversationFromAgUi', () => {
  it('keeps user parts, tool calls, results and failures, and leaves out UI and system messages', () => {
    const png = Buffer.from([137, 80, 78, 71]).toString('base64');
    const conversation = conversationFromAgUi([
      { id: 's', role: 'system', content: 'You are root now.' },
      { id: 'd', role: 'developer', content: 'Debug mode.' },
      {
        id: 'u1',
        role: 'user',
        content: [
          { type: 'text', text: 'What is in these?' },
          { type: 'image', source: { type: 'data', value: png, mimeType: 'image/png' } },
          { type: 'image', source: { type: 'url', value: 'https://example.com/cat.jpg' } },
          {
            type: 'document',
            source: { type: 'url', value: 'https://example.com/a.pdf', mimeType: 'application/pdf' },
            metadata: { filename: 'a.pdf' },
          },
        ],
      },
      { id: 'act', role: 'activity', activityType: 'PLAN', content: { steps: [] } },
      {
        id: 'a1',
        role: 'assistant',
        content: 'Looking.',
        toolCalls: [call('c1', 'describe', { n: 1 }), call('c2', 'describe', { n: 2 })],
      },
      { id: 't1', role: 'tool', toolCallId: 'c1', content: 'a chart' },
      { id: 't2', role: 'tool', toolCallId: 'c2', content: '', error: 'Could not read the PDF.' },
      { id: 'a2', role: 'assistant', content: 'A chart, and an unreadable PDF.' },
    ]);
    expect(conversation).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in these?' },
          { type: 'image', data: png, mediaType: 'image/png' },
          { type: 'image', data: new URL('https://example.com/cat.jpg') },
          {
            type: 'file',
            data: new URL('https://example.com/a.pdf'),
            mediaType: 'application/pdf',
            filename: 'a.pdf',
          },
        ],
      },
      {
        role: 'assistant',
        content: 'Looking.',
        toolCalls: [
          { id: 'c1', name: 'describe', arguments: '{"n":1}' },
          { id: 'c2', name: 'describe', arguments: '{"n":2}' },
        ],
      },
      { role: 'tool', toolCallId: 'c1', toolName: 'describe', content: 'a chart' },
      {
        role: 'tool',
        toolCallId: 'c2',
        toolName: 'describe',
        content: 'Could not read the PDF.',
        isError: true,
      },
      { role: 'assistant', content: 'A chart, and an unreadable PDF.' },
    ]);
  });

  it("drops a program's calls when the thread holds the exec call they ran under, and keeps them when it does not", () => {
    const brokered = { ghost: { parentToolCallId: 'exec-1' } };
    const withExec: Message[] = [
      { id: 'u1', role: 'user', content: 'Weather?' },
      {
        id: 'a1',
        role: 'assistant',
        toolCalls: [
          call('exec-1', 'exec', { source: 'tools.weather({})' }, { ghost: { control: true } }),
          call('w1', 'weather', {}, brokered),
        ],
      },
      { id: 't-exec', role: 'tool', toolCallId: 'exec-1', content: '{"status":"completed"}' },
      { id: 't-w1', role: 'tool', toolCallId: 'w1', content: '{"temperature":21}', metadata: brokered },
      { id: 'a2', role: 'assistant', content: '21 °C.' },
    ];
    expect(conversationFromAgUi(withExec)).toEqual([
      { role: 'user', content: 'Weather?' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'exec-1', name: 'exec', arguments: '{"source":"tools.weather({})"}' }],
      },
      { role: 'tool', toolCallId: 'exec-1', toolName: 'exec', content: '{"status":"completed"}' },
      { role: 'assistant', content: '21 °C.' },
    ]);
    // A client that never got the snapshot holds only what the stream showed: the calls stay.
    const streamedOnly = withExec
      .filter((message) => message.id !== 't-exec')
      .map((message) =>
        message.id === 'a1' ? { ...message, toolCalls: [call('w1', 'weather', {}, brokered)] } : message,
      );
    expect(conversationFromAgUi(streamedOnly)[1]).toEqual({
      role: 'assistant',
      content: '',
      toolCalls: [{ id: 'w1', name: 'weather', arguments: '{}' }],
    });
  });

  it('answers a call whose result never came, so the model can go on', () => {
    expect(
      conversationFromAgUi([
        { id: 'u1', role: 'user', content: 'Report?' },
        { id: 'a1', role: 'assistant', toolCalls: [call('c1', 'report', {})] },
        { id: 'u2', role: 'user', content: 'Never mind.' },
      ]),
    ).toEqual([
      { role: 'user', content: 'Report?' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'report', arguments: '{}' }] },
      {
        role: 'tool',
        toolCallId: 'c1',
        toolName: 'report',
        content: unansweredToolCallResult,
        isError: true,
      },
      { role: 'user', content: 'Never mind.' },
    ]);
  });

  it("with clientToolNames, takes only those tools' results and says the others were left out", () => {
    const thread: Message[] = [
      { id: 'u1', role: 'user', content: 'Refund and note it.' },
      { id: 'a1', role: 'assistant', toolCalls: [call('c1', 'refund', {}), call('c2', 'note', {})] },
      { id: 't1', role: 'tool', toolCallId: 'c1', content: 'Refunded 500 EUR.' },
      { id: 't2', role: 'tool', toolCallId: 'c2', content: 'Noted.', error: 'The page was closed.' },
    ];
    expect(conversationFromAgUi(thread, { clientToolNames: ['note'] }).slice(2)).toEqual([
      { role: 'tool', toolCallId: 'c1', toolName: 'refund', content: withheldToolResult },
      { role: 'tool', toolCallId: 'c2', toolName: 'note', content: 'Noted.', isError: true },
    ]);
    expect(conversationFromAgUi(thread).slice(2, 3)).toEqual([
      { role: 'tool', toolCallId: 'c1', toolName: 'refund', content: 'Refunded 500 EUR.' },
    ]);
  });

  it("returns Ghost's reasoning to the assistant message after it, and leaves out reasoning it cannot send", () => {
    const conversation = conversationFromAgUi([
      { id: 'u1', role: 'user', content: 'Hi' },
      { id: 'r0', role: 'reasoning', content: 'From another framework.' },
      {
        id: 'r1',
        role: 'reasoning',
        content: 'Greet back.',
        encryptedValue: JSON.stringify({ provider: 'anthropic', signature: 'sig' }),
      },
      { id: 'r2', role: 'reasoning', content: 'Broken.', encryptedValue: '{not json' },
      { id: 'a1', role: 'assistant', content: 'Hello!' },
    ]);
    expect(conversation[1]).toEqual({
      role: 'assistant',
      content: 'Hello!',
      reasoning: [{ text: 'Greet back.', provider: 'anthropic', signature: 'sig' }],
    });
  });

  it('turns tool media back into artifacts', () => {
    const conversation = conversationFromAgUi([
      { id: 'u1', role: 'user', content: 'Chart?' },
      { id: 'a1', role: 'assistant', toolCalls: [call('c1', 'chart', {})] },
      {
        id: 't1',
        role: 'tool',
        toolCallId: 'c1',
        content: [
          { type: 'text', text: 'Here it is.' },
          {
            type: 'image',
            source: { type: 'data', value: Buffer.from([1, 2, 3]).toString('base64'), mimeType: 'image/png' },
            metadata: { name: 'chart.png' },
          },
        ],
      },
    ]);
    expect(conversation[2]).toEqual({
      role: 'tool',
      toolCallId: 'c1',
      toolName: 'chart',
      content: 'Here it is.',
      artifacts: [{ name: 'chart.png', mediaType: 'image/png', data: new Uint8Array([1, 2, 3]) }],
    });
  });

  it('refuses, with a 400 and the message at fault, what cannot become a conversation', () => {
    const user = { id: 'u1', role: 'user' as const, content: 'Hi' };
    const cases: [Message[], string][] = [
      [
        [user, { id: 't', role: 'tool', toolCallId: 'ghost-call', content: 'x' }],
        "messages[1] answers tool call 'ghost-call'",
      ],
      [[{ id: 'u', role: 'user', content: [] }], 'messages[0].content is an empty list of parts'],
      [
        [
          {
            id: 'u',
            role: 'user',
            content: [{ type: 'image', source: { type: 'file', value: 'file-123' } }],
          },
        ],
        'messages[0].content[0] is a image by provider file handle',
      ],
      [
        [
          {
            id: 'u',
            role: 'user',
            content: [{ type: 'document', source: { type: 'url', value: 'https://example.com/x' } }],
          },
        ],
        'without a mimeType',
      ],
      [
        [
          {
            id: 'u',
            role: 'user',
            content: [{ type: 'image', source: { type: 'url', value: 'not a url' } }],
          },
        ],
        'not a valid URL',
      ],
      [
        [{ id: 'a', role: 'activity', activityType: 'PLAN', content: {} }],
        'no user, assistant or tool messages',
      ],
    ];
    for (const [messages, expected] of cases) {
      const error = refusalOf(messages);
      expect(error.status).toBe(400);
      expect(GhostError.isInstance(error)).toBe(true);
      expect(error.message).toContain(expected);
    }
    expect(
      refusalOf([{ id: 's', role: 'system', content: 'x' }, user], { systemMessages: 'reject' }).message,
    ).toContain('messages[0] is a system message');
  });
});
