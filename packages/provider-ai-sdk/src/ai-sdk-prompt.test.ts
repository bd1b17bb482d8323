import type { ModelToolMessage } from '@ghost/core/provider';
import { describe, expect, it } from 'vitest';
import { aiSDKPrompt, toolResultOutput } from './ai-sdk-prompt.js';

const v3 = { specificationVersion: 'v3', provider: 'anthropic.messages' } as const;

describe('the prompt', () => {
  it('sends reasoning back only to the provider that produced it', () => {
    const prompt = aiSDKPrompt(
      '',
      [
        {
          role: 'assistant',
          content: 'Five days.',
          reasoning: [
            {
              text: 'From OpenAI.',
              provider: 'openai.responses',
              providerMetadata: { openai: { itemId: 'rs_1' } },
            },
            {
              text: 'From Claude.',
              provider: 'anthropic.messages',
              providerMetadata: { anthropic: { signature: 's' } },
            },
          ],
        },
      ],
      v3,
    );
    expect(prompt).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'From Claude.', providerOptions: { anthropic: { signature: 's' } } },
          { type: 'text', text: 'Five days.' },
        ],
      },
    ]);
  });

  it('leaves out an empty system message and groups consecutive tool results', () => {
    const result = (toolCallId: string): ModelToolMessage => ({
      role: 'tool',
      toolCallId,
      toolName: 't',
      content: 'ok',
    });
    const prompt = aiSDKPrompt(
      '',
      [
        {
          role: 'assistant',
          content: '',
          toolCalls: [
            { id: 'a', name: 't', arguments: '' },
            { id: 'b', name: 't', arguments: '{"x":' },
          ],
        },
        result('a'),
        result('b'),
        { role: 'user', content: 'next' },
      ],
      v3,
    );
    expect(prompt.map((message) => message.role)).toEqual(['assistant', 'tool', 'user']);
    expect(prompt[0]?.content).toEqual([
      { type: 'tool-call', toolCallId: 'a', toolName: 't', input: {} },
      // Arguments that are not JSON go back as they were.
      { type: 'tool-call', toolCallId: 'b', toolName: 't', input: '{"x":' },
    ]);
    expect(prompt[1]?.content).toHaveLength(2);
  });

  it('splits data: URLs into media type and base64, and defaults an image’s type to image/*', () => {
    const [message] = aiSDKPrompt(
      '',
      [
        {
          role: 'user',
          content: [
            { type: 'image', data: new URL('data:image/webp;base64,UklGRg==') },
            { type: 'image', data: 'data:image/png;base64,iVBORw==' },
            { type: 'file', data: new URL('data:text/plain,hello%20world'), mediaType: 'text/plain' },
            { type: 'image', data: 'iVBORw==' },
          ],
        },
      ],
      v3,
    );
    expect(message?.content).toEqual([
      { type: 'file', data: 'UklGRg==', mediaType: 'image/webp' },
      { type: 'file', data: 'iVBORw==', mediaType: 'image/png' },
      { type: 'file', data: Buffer.from('hello world').toString('base64'), mediaType: 'text/plain' },
      { type: 'file', data: 'iVBORw==', mediaType: 'image/*' },
    ]);
  });

  it('tags file data for v4 and keeps it bare for v2 and v3', () => {
    const user = {
      role: 'user' as const,
      content: [
        { type: 'image' as const, data: new URL('https://example.com/a.png'), mediaType: 'image/png' },
        { type: 'file' as const, data: 'JVBERi0=', mediaType: 'application/pdf', filename: 'a.pdf' },
      ],
    };
    expect(aiSDKPrompt('', [user], { specificationVersion: 'v4', provider: 'p' })[0]?.content).toEqual([
      {
        type: 'file',
        data: { type: 'url', url: new URL('https://example.com/a.png') },
        mediaType: 'image/png',
      },
      {
        type: 'file',
        data: { type: 'data', data: 'JVBERi0=' },
        mediaType: 'application/pdf',
        filename: 'a.pdf',
      },
    ]);
    expect(aiSDKPrompt('', [user], { specificationVersion: 'v2', provider: 'p' })[0]?.content).toEqual([
      { type: 'file', data: new URL('https://example.com/a.png'), mediaType: 'image/png' },
      { type: 'file', data: 'JVBERi0=', mediaType: 'application/pdf', filename: 'a.pdf' },
    ]);
  });
});

describe('tool results', () => {
  const message = (fields: Partial<ModelToolMessage>): ModelToolMessage => ({
    role: 'tool',
    toolCallId: 'c',
    toolName: 't',
    content: '',
    ...fields,
  });

  it('types a JSON object or array as json, any other text as text, and a failure as error-text', () => {
    expect(toolResultOutput(message({ content: '{"a":1}' }), v3)).toEqual({ type: 'json', value: { a: 1 } });
    expect(toolResultOutput(message({ content: ' [1,2]' }), v3)).toEqual({ type: 'json', value: [1, 2] });
    expect(toolResultOutput(message({ content: '42' }), v3)).toEqual({ type: 'text', value: '42' });
    expect(toolResultOutput(message({ content: '{not json' }), v3)).toEqual({
      type: 'text',
      value: '{not json',
    });
    expect(toolResultOutput(message({ content: 'No entry.', isError: true }), v3)).toEqual({
      type: 'error-text',
      value: 'No entry.',
    });
  });

  it('sends artifacts as content in the shape of each version', () => {
    const withArtifacts = message({
      content: 'Here.',
      artifacts: [
        { name: 'chart.png', mediaType: 'image/png', data: new Uint8Array([1, 2]) },
        { name: 'report.pdf', mediaType: 'application/pdf', data: new Uint8Array([3]) },
        { name: 'notes.txt', mediaType: 'text/plain', data: 'plain notes' },
      ],
    });
    expect(toolResultOutput(withArtifacts, v3)).toEqual({
      type: 'content',
      value: [
        { type: 'text', text: 'Here.' },
        { type: 'image-data', data: 'AQI=', mediaType: 'image/png' },
        { type: 'file-data', data: 'Aw==', mediaType: 'application/pdf', filename: 'report.pdf' },
        { type: 'text', text: 'plain notes' },
      ],
    });
    expect(toolResultOutput(withArtifacts, { specificationVersion: 'v2', provider: 'p' }).value).toEqual([
      { type: 'text', text: 'Here.' },
      { type: 'media', data: 'AQI=', mediaType: 'image/png' },
      { type: 'media', data: 'Aw==', mediaType: 'application/pdf' },
      { type: 'text', text: 'plain notes' },
    ]);
    expect(toolResultOutput(withArtifacts, { specificationVersion: 'v4', provider: 'p' }).value).toEqual([
      { type: 'text', text: 'Here.' },
      { type: 'file', data: { type: 'data', data: 'AQI=' }, mediaType: 'image/png', filename: 'chart.png' },
      {
        type: 'file',
        data: { type: 'data', data: 'Aw==' },
        mediaType: 'application/pdf',
        filename: 'report.pdf',
      },
      { type: 'text', text: 'plain notes' },
    ]);
  });
});
