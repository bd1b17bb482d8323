import { createOpenAI } from '@ai-sdk/openai';
import type { ModelMessage } from '@ghost/core';
import { ModelRateLimitError } from '@ghost/core/provider';
import { afterEach, describe, expect, it } from 'vitest';
import { fromAISDK } from './from-ai-sdk.js';
import { LoopbackServer } from './test-support/loopback-server.js';
import { assistantMessageFrom, modelRequest, streamAll, streamUntilError } from './test-support/model-run.js';
import { ResponsesEvents } from './test-support/openai-wire.js';

// @ai-sdk/openai 3.x (specification v3) on its default model, the Responses API, against a
// loopback server that speaks Responses' streaming events.

let server: LoopbackServer;
afterEach(async () => {
  await server?.close();
});

function responsesModel() {
  const openai = createOpenAI({ apiKey: 'sk-test', baseURL: `${server.origin}/v1` });
  return fromAISDK(openai('gpt-5'));
}

const usage = {
  input_tokens: 2048,
  input_tokens_details: { cached_tokens: 1536 },
  output_tokens: 300,
  output_tokens_details: { reasoning_tokens: 256 },
  total_tokens: 2348,
};

describe('reasoning', () => {
  it('streams reasoning deltas and ends each block with its item id and encrypted content', async () => {
    server = await LoopbackServer.start([
      new ResponsesEvents()
        .reasoning(0, 'rs_1', ['Refunds are in ', 'the policy.'], 'gAAAA-encrypted-1')
        .message(1, 'msg_1', ['Five ', 'days.'])
        .completed(usage),
    ]);
    const parts = await streamAll(responsesModel(), modelRequest());
    expect(parts).toEqual([
      { type: 'response-metadata', id: 'resp_ghost1', modelId: 'gpt-5-2025-08-07' },
      { type: 'reasoning-delta', text: 'Refunds are in ' },
      { type: 'reasoning-delta', text: 'the policy.' },
      {
        type: 'reasoning-end',
        reasoning: {
          text: 'Refunds are in the policy.',
          provider: 'openai.responses',
          providerMetadata: { openai: { itemId: 'rs_1', reasoningEncryptedContent: 'gAAAA-encrypted-1' } },
        },
      },
      { type: 'text-delta', text: 'Five ' },
      { type: 'text-delta', text: 'days.' },
      {
        type: 'usage',
        usage: { inputTokens: 2048, outputTokens: 300, cacheReadTokens: 1536, reasoningTokens: 256 },
      },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('sends the reasoning back next turn with its encrypted content', async () => {
    server = await LoopbackServer.start([
      new ResponsesEvents()
        .reasoning(0, 'rs_1', ['Look it up.'], 'gAAAA-encrypted-1')
        .functionCallAdded(1, 'fc_1', 'call_1', 'lookup')
        .functionArguments(1, 'fc_1', '{"topic":')
        .functionArguments(1, 'fc_1', '"refunds"}')
        .functionCallDone(1, 'fc_1', 'call_1', 'lookup', '{"topic":"refunds"}')
        .completed(usage),
      new ResponsesEvents('resp_ghost2').message(0, 'msg_2', ['Five days.']).completed(usage),
    ]);
    const model = responsesModel();
    const stateless = { openai: { store: false, include: ['reasoning.encrypted_content'] } };
    const tools = [{ name: 'lookup', description: 'Looks a topic up.', inputSchema: { type: 'object' } }];
    const first = await streamAll(model, modelRequest({ tools, providerOptions: stateless }));
    expect(first.filter((part) => part.type.startsWith('tool-call'))).toEqual([
      { type: 'tool-call-start', index: 0, id: 'call_1', name: 'lookup' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"topic":' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '"refunds"}' },
      { type: 'tool-call-stop', index: 0, providerMetadata: { openai: { itemId: 'fc_1' } } },
    ]);
    expect(first.at(-1)).toEqual({ type: 'finish', reason: 'tool-calls' });

    const messages: ModelMessage[] = [
      { role: 'user', content: 'How long do refunds take?' },
      assistantMessageFrom(first),
      { role: 'tool', toolCallId: 'call_1', toolName: 'lookup', content: '{"text":"5 days"}' },
    ];
    await streamAll(model, modelRequest({ messages, tools, providerOptions: stateless }));
    expect(server.requests[1]?.body).toMatchObject({
      store: false,
      include: ['reasoning.encrypted_content'],
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'How long do refunds take?' }] },
        {
          type: 'reasoning',
          id: 'rs_1',
          encrypted_content: 'gAAAA-encrypted-1',
          summary: [{ type: 'summary_text', text: 'Look it up.' }],
        },
        { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{"topic":"refunds"}' },
        { type: 'function_call_output', call_id: 'call_1', output: '{"text":"5 days"}' },
      ],
    });
    expect((server.body(1).input as unknown[]).length).toBe(4);
  });

  it('refers to stored reasoning by its item id when the conversation is stored (the default)', async () => {
    server = await LoopbackServer.start([
      new ResponsesEvents()
        .reasoning(0, 'rs_7', ['Short.'], null)
        .message(1, 'msg_7', ['Hi.'])
        .completed(usage),
      new ResponsesEvents('resp_ghost2').message(0, 'msg_8', ['Again.']).completed(usage),
    ]);
    const model = responsesModel();
    const first = await streamAll(model, modelRequest());
    const assistant = assistantMessageFrom(first);
    expect(assistant.reasoning).toEqual([
      {
        text: 'Short.',
        provider: 'openai.responses',
        providerMetadata: { openai: { itemId: 'rs_7', reasoningEncryptedContent: null } },
      },
    ]);
    await streamAll(
      model,
      modelRequest({
        messages: [{ role: 'user', content: 'Hello' }, assistant, { role: 'user', content: 'Again' }],
      }),
    );
    expect(server.requests[1]?.body.input).toEqual([
      { role: 'user', content: [{ type: 'input_text', text: 'Hello' }] },
      { type: 'item_reference', id: 'rs_7' },
      { role: 'assistant', content: [{ type: 'output_text', text: 'Hi.' }] },
      { role: 'user', content: [{ type: 'input_text', text: 'Again' }] },
    ]);
  });
});

describe('the request and the finish', () => {
  it('sends structured output as text.format json_schema, instructions as a developer message', async () => {
    server = await LoopbackServer.start([
      new ResponsesEvents().message(0, 'msg_1', ['{"days":5}']).completed(usage),
    ]);
    await streamAll(
      responsesModel(),
      modelRequest({
        instructions: 'Answer in JSON.',
        output: {
          type: 'json',
          schema: {
            type: 'object',
            properties: { days: { type: 'number' } },
            required: ['days'],
            additionalProperties: false,
          },
        },
        settings: { maxOutputTokens: 500 },
        providerOptions: { openai: { reasoningEffort: 'low' } },
      }),
    );
    expect(server.requests[0]?.path).toBe('/v1/responses');
    expect(server.requests[0]?.body).toMatchObject({
      model: 'gpt-5',
      max_output_tokens: 500,
      reasoning: { effort: 'low' },
      text: {
        format: {
          type: 'json_schema',
          name: 'output',
          strict: true,
          schema: {
            type: 'object',
            properties: { days: { type: 'number' } },
            required: ['days'],
            additionalProperties: false,
          },
        },
      },
      input: [
        { role: 'developer', content: 'Answer in JSON.' },
        { role: 'user', content: [{ type: 'input_text', text: 'Hello' }] },
      ],
    });
  });

  it('reports an incomplete response as length, with the raw reason', async () => {
    server = await LoopbackServer.start([
      new ResponsesEvents().message(0, 'msg_1', ['Five']).completed(usage, 'max_output_tokens'),
    ]);
    const parts = await streamAll(responsesModel(), modelRequest());
    expect(parts.at(-1)).toEqual({ type: 'finish', reason: 'length', rawReason: 'max_output_tokens' });
  });

  it('maps an error event before any output through the SDK’s status and retryability', async () => {
    const quota = new ResponsesEvents();
    quota.add('error', {
      code: 'insufficient_quota',
      message: 'You exceeded your current quota.',
      param: null,
    });
    server = await LoopbackServer.start([{ kind: 'sse', events: quota.events }]);
    const { parts, error } = await streamUntilError(responsesModel(), modelRequest());
    expect(parts).toEqual([]);
    expect(ModelRateLimitError.isInstance(error)).toBe(true);
    expect((error as ModelRateLimitError).isRetryable).toBe(false);
    expect(server.requests).toHaveLength(1);
  });
});
