import { describe, expect, it } from 'vitest';
import { chooseChatModel } from './chat-model.js';

describe('the model the chat uses', () => {
  it('is GHOST_MODEL, else OpenAI or Anthropic by their keys, else the scripted one', () => {
    expect(chooseChatModel({ GHOST_MODEL: 'anthropic:claude-opus-4-1', OPENAI_API_KEY: 'k' }).name).toBe(
      'anthropic:claude-opus-4-1',
    );
    expect(chooseChatModel({ OPENAI_API_KEY: 'k', ANTHROPIC_API_KEY: 'k' }).name).toBe('openai:gpt-5.1');
    expect(chooseChatModel({ ANTHROPIC_API_KEY: 'k' }).name).toBe('anthropic:claude-sonnet-4-5');
    const scripted = chooseChatModel({});
    expect(scripted).toMatchObject({ name: 'scripted', isScripted: true });
    expect(scripted.description).toMatch(/set OPENAI_API_KEY, ANTHROPIC_API_KEY or GHOST_MODEL/);
  });
});
