import { describe, expect, it } from 'vitest';
import { genAIProviderName } from './gen-ai-provider-name.js';

describe('genAIProviderName', () => {
  it("names Ghost's and the AI SDK's providers as the conventions' well-known values", () => {
    expect(genAIProviderName('openai')).toBe('openai');
    expect(genAIProviderName('openai-chat')).toBe('openai');
    expect(genAIProviderName('openai.responses')).toBe('openai');
    expect(genAIProviderName('anthropic')).toBe('anthropic');
    expect(genAIProviderName('anthropic.messages')).toBe('anthropic');
    expect(genAIProviderName('google.generative-ai')).toBe('gcp.gemini');
    expect(genAIProviderName('google.vertex.chat')).toBe('gcp.vertex_ai');
    expect(genAIProviderName('amazon-bedrock')).toBe('aws.bedrock');
    expect(genAIProviderName('mistral.chat')).toBe('mistral_ai');
    expect(genAIProviderName('xai.chat')).toBe('x_ai');
  });

  it('keeps the name of a provider the conventions do not know, and of a local OpenAI-compatible server', () => {
    expect(genAIProviderName('openai-compatible')).toBe('openai-compatible');
    expect(genAIProviderName('lmstudio')).toBe('lmstudio');
    expect(genAIProviderName('scripted')).toBe('scripted');
    expect(genAIProviderName('openaiish')).toBe('openaiish');
  });
});
