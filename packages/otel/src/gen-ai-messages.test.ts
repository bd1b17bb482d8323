import { describe, expect, it } from 'vitest';
import {
  genAIFinishReason,
  genAIInputMessages,
  genAIOutputMessage,
  jsonAttribute,
} from './gen-ai-messages.js';

describe('genAIInputMessages', () => {
  it('turns images and files into blob and uri parts, keeping inline bytes as base64', () => {
    const bytes = new Uint8Array([1, 2, 3]);
    const [message] = genAIInputMessages([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in these?' },
          { type: 'image', data: bytes, mediaType: 'image/png' },
          { type: 'image', data: new URL('https://example.com/cat.jpg') },
          { type: 'image', data: new URL('data:image/gif;base64,R0lGOD') },
          { type: 'file', data: 'JVBERi0=', mediaType: 'application/pdf', filename: 'terms.pdf' },
          { type: 'file', data: new URL('data:text/plain,hello%20there'), mediaType: 'text/plain' },
        ],
      },
    ]);
    expect(message).toEqual({
      role: 'user',
      parts: [
        { type: 'text', content: 'What is in these?' },
        { type: 'blob', modality: 'image', mime_type: 'image/png', content: 'AQID' },
        { type: 'uri', modality: 'image', mime_type: null, uri: 'https://example.com/cat.jpg' },
        { type: 'blob', modality: 'image', mime_type: 'image/gif', content: 'R0lGOD' },
        {
          type: 'blob',
          modality: 'document',
          mime_type: 'application/pdf',
          content: 'JVBERi0=',
          filename: 'terms.pdf',
        },
        {
          type: 'blob',
          modality: 'document',
          mime_type: 'text/plain',
          content: Buffer.from('hello there').toString('base64'),
        },
      ],
    });
  });

  it('keeps tool results and arguments that are not JSON as text', () => {
    expect(
      genAIInputMessages([
        {
          role: 'assistant',
          content: '',
          toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{"topic": ' }],
        },
        {
          role: 'tool',
          toolCallId: 'call_1',
          toolName: 'lookup',
          content: 'Invalid tool input',
          isError: true,
        },
      ]),
    ).toEqual([
      {
        role: 'assistant',
        parts: [{ type: 'tool_call', id: 'call_1', name: 'lookup', arguments: '{"topic": ' }],
      },
      { role: 'tool', parts: [{ type: 'tool_call_response', id: 'call_1', response: 'Invalid tool input' }] },
    ]);
  });
});

describe('genAIOutputMessage', () => {
  it('leaves out empty text and reasoning', () => {
    expect(genAIOutputMessage({ reasoning: '', text: '', toolCalls: [], finishReason: 'length' })).toEqual({
      role: 'assistant',
      parts: [],
      finish_reason: 'length',
    });
  });
});

describe('genAIFinishReason', () => {
  it("speaks the conventions' vocabulary, and keeps the provider's reason for 'other'", () => {
    expect(genAIFinishReason('tool-calls', 'tool_use')).toBe('tool_call');
    expect(genAIFinishReason('stop', 'end_turn')).toBe('stop');
    expect(genAIFinishReason('length', undefined)).toBe('length');
    expect(genAIFinishReason('content-filter', undefined)).toBe('content_filter');
    expect(genAIFinishReason('other', 'pause_turn')).toBe('pause_turn');
    expect(genAIFinishReason('other', undefined)).toBe('other');
  });
});

describe('jsonAttribute', () => {
  it('never throws, whatever it is given', () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(jsonAttribute(circular)).toBe('[object Object]');
    expect(jsonAttribute(10n)).toBe('10');
    expect(jsonAttribute(undefined)).toBe('undefined');
    expect(jsonAttribute({ a: [1] })).toBe('{"a":[1]}');
  });
});
