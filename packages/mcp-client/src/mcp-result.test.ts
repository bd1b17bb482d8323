import { ToolError } from '@ghost/core';
import { describe, expect, it } from 'vitest';
import { toolResultOf } from './mcp-result.js';

describe('toolResultOf', () => {
  it('prefers structuredContent as the value, keeping images as artifacts', () => {
    const result = toolResultOf(
      {
        content: [
          { type: 'text', text: '{"n":1}' },
          { type: 'audio', data: Buffer.from('RIFF').toString('base64'), mimeType: 'audio/wav' },
        ],
        structuredContent: { n: 1 },
      },
      'counter',
    );
    expect(result.value).toEqual({ n: 1 });
    expect(result.artifacts).toEqual([
      { name: 'counter-2.wav', mediaType: 'audio/wav', data: Buffer.from('RIFF') },
    ]);
  });

  it('joins text blocks, and names resource links in the text', () => {
    const result = toolResultOf(
      {
        content: [
          { type: 'text', text: 'first' },
          { type: 'resource_link', name: 'notes', uri: 'file:///notes.md' },
          {
            type: 'resource',
            resource: { uri: 'file:///data.bin', blob: Buffer.from([1, 2]).toString('base64') },
          },
        ],
      },
      'docs',
    );
    expect(result.value).toBe('first\nResource notes: file:///notes.md');
    expect(result.artifacts).toEqual([
      {
        name: 'data.bin',
        mediaType: 'application/octet-stream',
        data: Buffer.from([1, 2]),
        metadata: { uri: 'file:///data.bin' },
      },
    ]);
  });

  it('turns isError into a ToolError carrying the text, or a default message', () => {
    let failure: unknown;
    try {
      toolResultOf({ isError: true, content: [{ type: 'text', text: 'No such order.' }] }, 'orders');
    } catch (error) {
      failure = error;
    }
    expect(ToolError.isInstance(failure)).toBe(true);
    expect((failure as Error).message).toBe('No such order.');
    expect(() => toolResultOf({ isError: true, content: [] }, 'orders')).toThrow(/failed without saying why/);
  });
});
