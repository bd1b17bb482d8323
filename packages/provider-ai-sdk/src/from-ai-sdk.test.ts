import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAI as createOpenAIV2 } from '@ai-sdk/openai-v2';
import { createOpenAI as createOpenAIV4 } from '@ai-sdk/openai-v4';
import type { LanguageModelV2, LanguageModelV3 } from '@ai-sdk/provider';
import type { LanguageModelV4 } from '@ai-sdk/provider-v4';
import { ConfigurationError } from '@ghost/core';
import { ModelAuthenticationError } from '@ghost/core/provider';
import { afterEach, describe, expect, it } from 'vitest';
import type { AISDKLanguageModel } from './ai-sdk-language-model.js';
import { fromAISDK } from './from-ai-sdk.js';
import { LoopbackServer } from './test-support/loopback-server.js';
import { modelRequest, streamUntilError } from './test-support/model-run.js';
import { chatTextStream } from './test-support/openai-wire.js';

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Compiles only while every supported specification's published type fits `fromAISDK`. */
function wrapEach(models: { v2: LanguageModelV2; v3: LanguageModelV3; v4: LanguageModelV4 }) {
  return [fromAISDK(models.v2), fromAISDK(models.v3), fromAISDK(models.v4)];
}

describe('the models it takes', () => {
  it('wraps v2, v3 and v4 models from the published provider packages', () => {
    const wrapped = wrapEach({
      v2: createOpenAIV2({ apiKey: 'k' }).chat('gpt-4.1'),
      v3: createAnthropic({ apiKey: 'k' })('claude-sonnet-4-5'),
      v4: createOpenAIV4({ apiKey: 'k' })('gpt-5'),
    });
    expect(
      wrapped.map(({ specificationVersion, provider, modelId }) => ({
        specificationVersion,
        provider,
        modelId,
      })),
    ).toEqual([
      { specificationVersion: 'model-v1', provider: 'openai.chat', modelId: 'gpt-4.1' },
      { specificationVersion: 'model-v1', provider: 'anthropic.messages', modelId: 'claude-sonnet-4-5' },
      { specificationVersion: 'model-v1', provider: 'openai.responses', modelId: 'gpt-5' },
    ]);
  });

  it('refuses a v1 model (ai 4) with an error naming what is supported and what to upgrade', () => {
    const v1: AISDKLanguageModel = {
      specificationVersion: 'v1',
      provider: 'openai.chat',
      modelId: 'gpt-4o',
      doStream: () => Promise.reject(new Error('never called')),
    };
    const refusal = (() => {
      try {
        fromAISDK(v1);
      } catch (error) {
        return error;
      }
    })();
    expect(ConfigurationError.isInstance(refusal)).toBe(true);
    expect((refusal as Error).message).toBe(
      "fromAISDK supports AI SDK language models of specification v2 (ai 5, @ai-sdk/* 2.x), v3 (ai 6, @ai-sdk/* 3.x) and v4 (ai 7, @ai-sdk/* 4.x); model 'gpt-4o' of provider 'openai.chat' has specification \"v1\". Upgrade the provider package (@ai-sdk/* 2.x or later, with ai 5 or later).",
    );
  });

  it('refuses a specification from the future', () => {
    const v9 = {
      specificationVersion: 'v9',
      provider: 'p',
      modelId: 'm',
      doStream: () => Promise.reject(new Error('no')),
    };
    expect(() => fromAISDK(v9)).toThrow(
      /has specification "v9"\. Use a provider package of a supported line/,
    );
  });

  it('refuses a model id string, which only the ai package resolves', () => {
    expect(() => fromAISDK('openai/gpt-5' as unknown as AISDKLanguageModel)).toThrow(ConfigurationError);
    expect(() => fromAISDK('openai/gpt-5' as unknown as AISDKLanguageModel)).toThrow(
      /given the string 'openai\/gpt-5'/,
    );
  });

  it('refuses unknown and invalid options', () => {
    const model = createOpenAI({ apiKey: 'k' })('gpt-5');
    expect(() => fromAISDK(model, { temperature: 1 } as never)).toThrow(
      /fromAISDK has no option 'temperature'\. Its options are: maxRetries, credentialsHint/,
    );
    expect(() => fromAISDK(model, { maxRetries: -1 })).toThrow(
      /maxRetries must be a whole number, 0 or more; it is -1/,
    );
    expect(() => fromAISDK(model, { maxRetries: 1.5 })).toThrow(ConfigurationError);
  });
});

describe('credentials', () => {
  it('fails before any request when no OpenAI key is set, naming OPENAI_API_KEY', async () => {
    server = await LoopbackServer.start([chatTextStream(['never'])]);
    const saved = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    try {
      const model = fromAISDK(createOpenAI({ baseURL: `${server.origin}/v1` })('gpt-5'));
      const { parts, error } = await streamUntilError(model, modelRequest());
      expect(parts).toEqual([]);
      expect(ModelAuthenticationError.isInstance(error)).toBe(true);
      expect((error as Error).message).toMatch(
        /openai\.responses: OpenAI API key is missing.*OPENAI_API_KEY/,
      );
      expect(server.requests).toHaveLength(0);
    } finally {
      if (saved !== undefined) process.env.OPENAI_API_KEY = saved;
    }
  });

  it('names the credentials hint given in place of the guessed variable', async () => {
    server = await LoopbackServer.start([
      { kind: 'json', status: 403, body: { error: { message: 'Forbidden', type: 'permission_error' } } },
    ]);
    const openai = createOpenAI({ apiKey: 'k', baseURL: `${server.origin}/v1` });
    const { error } = await streamUntilError(
      fromAISDK(openai.chat('m'), { credentialsHint: 'GATEWAY_TOKEN' }),
      modelRequest(),
    );
    expect(ModelAuthenticationError.isInstance(error)).toBe(true);
    expect((error as Error).message).toBe('openai.chat answered 403: Forbidden. Check GATEWAY_TOKEN.');
  });
});
