import { codeMode } from '@ghost/code-mode';
import { createRuntime, defineAgent, defineTool, type StreamEvent } from '@ghost/core';
import { quickjsEngine } from '@ghost/engine-quickjs';
import { bwrapSandbox } from '@ghost/sandbox-bwrap';
import Type from 'typebox';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createOpenAI } from './openai-provider.js';
import { chatChunk, chatText, chatUsageChunk, toolCallFragment } from './test-support/chat-chunks.js';
import { chatStream, errorReply, LoopbackServer, responsesStream } from './test-support/loopback-server.js';
import {
  answeringModel,
  functionCallEvents,
  messageEvents,
  reasoningSummaryEvents,
  responseCompleted,
  responseCreated,
  responseId,
  responseIncomplete,
  textAnswer,
  usage,
} from './test-support/responses-events.js';

let server: LoopbackServer;

beforeEach(async () => {
  server = await LoopbackServer.start();
});

afterEach(async () => {
  await server.close();
});

const weather = defineTool({
  name: 'weather',
  description: 'The temperature in a city, in °C.',
  input: Type.Object({ city: Type.String() }),
  execute: ({ city }) => ({ city, temperature: city === 'Paris' ? 21 : 25 }),
});

const clock = defineTool({
  name: 'clock',
  description: 'The local time in a city.',
  input: Type.Object({ city: Type.String() }),
  execute: ({ city }) => ({ city, time: city === 'Paris' ? '14:00' : '15:00' }),
});

// The program the model writes: two tools at once with Promise.all, its last expression the value.
const program = [
  'const [paris, rome] = await Promise.all([',
  '  tools.weather({ city: "Paris" }),',
  '  tools.clock({ city: "Rome" }),',
  ']);',
  '({ parisTemperature: paris.temperature, romeTime: rome.time })',
].join('\n');

function openai() {
  return createOpenAI({ apiKey: 'sk-test', baseURL: server.baseURL, maxRetries: 1 });
}

describe('an agent on the Responses API', () => {
  it('calls tools in parallel, sends their results back, and answers', async () => {
    server.reply(
      responsesStream([
        responseCreated(),
        ...reasoningSummaryEvents(0, 'rs_1', [['Need both tools.']], 'gAAAA-1'),
        ...functionCallEvents(1, 'fc_1', 'call_w', 'weather', ['{"city":', '"Paris"}']),
        ...functionCallEvents(2, 'fc_2', 'call_c', 'clock', ['{"city":"Rome"}']),
        responseCompleted(usage({ input: 100, cached: 0, output: 30, reasoning: 10 })),
      ]),
      responsesStream(
        textAnswer(
          ['Paris is 21 °C; ', 'it is 15:00 in Rome.'],
          usage({ input: 150, cached: 100, output: 12 }),
        ),
      ),
    );
    const agent = defineAgent({
      name: 'travel',
      instructions: 'Answer briefly.',
      model: openai()('gpt-5'),
      tools: [weather, clock],
    });
    const run = await agent.ask('Weather in Paris and time in Rome?', { runtime: createRuntime() });
    expect(run.outcome).toBe('completed');
    expect(run.response).toBe('Paris is 21 °C; it is 15:00 in Rome.');
    expect(run.usage.toJSON()).toEqual({
      inputTokens: 250,
      cacheReadTokens: 100,
      outputTokens: 42,
      reasoningTokens: 10,
      totalTokens: 292,
    });
    const second = server.requests[1]?.body;
    expect(second.instructions).toBe('Answer briefly.');
    expect(second.input).toEqual([
      { role: 'user', content: 'Weather in Paris and time in Rome?' },
      {
        type: 'reasoning',
        id: 'rs_1',
        summary: [{ type: 'summary_text', text: 'Need both tools.' }],
        encrypted_content: 'gAAAA-1',
      },
      { type: 'function_call', call_id: 'call_w', name: 'weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call', call_id: 'call_c', name: 'clock', arguments: '{"city":"Rome"}' },
      { type: 'function_call_output', call_id: 'call_w', output: '{"city":"Paris","temperature":21}' },
      { type: 'function_call_output', call_id: 'call_c', output: '{"city":"Rome","time":"15:00"}' },
    ]);
  });

  it('shows a retried request as a model_retry event, and the response id and model on model_stop', async () => {
    server.reply(
      errorReply(503, { message: 'Overloaded.', type: 'server_error' }, { 'retry-after-ms': '10' }),
      responsesStream(textAnswer(['hi'])),
    );
    const agent = defineAgent({ name: 'retrying', model: openai()('gpt-4.1') });
    const events: StreamEvent[] = [];
    const stream = agent.streamAsk('hello', { runtime: createRuntime() });
    for await (const event of stream) events.push(event);
    const run = await stream.run;
    expect(run.outcome).toBe('completed');
    expect(run.response).toBe('hi');
    expect(server.requests).toHaveLength(2);
    const retry = events.find((event) => event.type === 'model_retry');
    expect(retry?.data).toMatchObject({
      turn: 1,
      attempt: 2,
      delayMs: 10,
      error: { name: 'ModelUnavailableError', code: 'MODEL_UNAVAILABLE' },
    });
    expect(events.find((event) => event.type === 'model_stop')?.data).toMatchObject({
      finishReason: 'stop',
      rawFinishReason: 'completed',
      responseId,
      responseModelId: answeringModel,
    });
  });

  it('continues a conversation: the next request carries the history, reasoning items sent back', async () => {
    server.reply(
      responsesStream([
        responseCreated(),
        ...reasoningSummaryEvents(0, 'rs_1', [['Check the weather.']], 'gAAAA-first'),
        ...functionCallEvents(1, 'fc_1', 'call_w', 'weather', ['{"city":"Paris"}']),
        responseCompleted(usage({ input: 80, output: 20, reasoning: 8 })),
      ]),
      responsesStream([
        responseCreated(),
        ...reasoningSummaryEvents(0, 'rs_2', [['Answer.']], 'gAAAA-second'),
        ...messageEvents(1, 'msg_1', ['21 °C in Paris.']),
        responseCompleted(),
      ]),
      responsesStream(textAnswer(['Rome is 25 °C.'])),
    );
    const agent = defineAgent({ name: 'weather', model: openai()('gpt-5'), tools: [weather] });
    const runtime = createRuntime();
    const first = await agent.ask('How warm is Paris?', { runtime });
    expect(first.response).toBe('21 °C in Paris.');
    const second = await agent.ask([...first.messages, { role: 'user', content: 'And Rome?' }], { runtime });
    expect(second.outcome).toBe('completed');
    expect(second.response).toBe('Rome is 25 °C.');
    expect(server.requests).toHaveLength(3);
    expect(server.requests[2]?.body.input).toEqual([
      { role: 'user', content: 'How warm is Paris?' },
      {
        type: 'reasoning',
        id: 'rs_1',
        summary: [{ type: 'summary_text', text: 'Check the weather.' }],
        encrypted_content: 'gAAAA-first',
      },
      { type: 'function_call', call_id: 'call_w', name: 'weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'call_w', output: '{"city":"Paris","temperature":21}' },
      {
        type: 'reasoning',
        id: 'rs_2',
        summary: [{ type: 'summary_text', text: 'Answer.' }],
        encrypted_content: 'gAAAA-second',
      },
      { role: 'assistant', content: '21 °C in Paris.' },
      { role: 'user', content: 'And Rome?' },
    ]);
    expect(server.requests[2]?.body).toMatchObject({
      store: false,
      include: ['reasoning.encrypted_content'],
    });
  });

  it('answers with structured output, repairing one answer that does not match', async () => {
    server.reply(
      responsesStream(textAnswer(['{"city":"Paris"}'])),
      responsesStream(textAnswer(['{"city":"Paris",', '"temperature":21}'])),
    );
    const Forecast = Type.Object(
      { city: Type.String(), temperature: Type.Number() },
      { additionalProperties: false },
    );
    const agent = defineAgent({
      name: 'forecaster',
      model: openai()('gpt-4.1'),
      output: Forecast,
      modelSettings: { temperature: 0, maxOutputTokens: 200 },
      providerOptions: { openai: { service_tier: 'flex' } },
    });
    const run = await agent.ask('Forecast for Paris as JSON.', { runtime: createRuntime() });
    expect(run.outcome).toBe('completed');
    expect(run.output).toEqual({ city: 'Paris', temperature: 21 });
    const [first, repair] = server.requests.map((request) => request.body);
    const format = {
      type: 'json_schema',
      name: 'output',
      schema: {
        type: 'object',
        properties: { city: { type: 'string' }, temperature: { type: 'number' } },
        required: ['city', 'temperature'],
        additionalProperties: false,
      },
      strict: true,
    };
    for (const body of [first, repair]) {
      expect(body.text).toEqual({ format });
      expect(body).toMatchObject({ temperature: 0, max_output_tokens: 200, service_tier: 'flex' });
    }
    expect(repair.input.slice(0, 2)).toEqual([
      { role: 'user', content: 'Forecast for Paris as JSON.' },
      { role: 'assistant', content: '{"city":"Paris"}' },
    ]);
    expect(repair.input[2]).toMatchObject({
      role: 'user',
      content: expect.stringContaining('required properties temperature'),
    });
  });

  it('fails the run when the content filter stops the answer', async () => {
    server.reply(
      responsesStream([
        responseCreated(),
        ...messageEvents(0, 'msg_1', ['I cannot']),
        responseIncomplete('content_filter'),
      ]),
    );
    const agent = defineAgent({ name: 'filtered', model: openai()('gpt-4.1') });
    const run = await agent.ask('something', { runtime: createRuntime() });
    expect(run.outcome).toBe('failed');
    expect(run.error?.name).toBe('ModelContentFilterError');
  });
});

describe('an agent on Chat Completions', () => {
  it('continues a conversation and answers with structured output after one repair', async () => {
    server.reply(
      chatStream([
        chatChunk({
          tool_calls: [toolCallFragment(0, { id: 'call_w', name: 'weather', arguments: '{"city":"Paris"}' })],
        }),
        chatChunk({}, 'tool_calls'),
      ]),
      chatStream(chatText(['Paris is 21 °C.'])),
      chatStream(chatText(['not json'])),
      chatStream(chatText(['{"temperature":25}'])),
    );
    const agent = defineAgent({
      name: 'weather',
      instructions: 'Be brief.',
      model: openai().chat('gpt-4.1'),
      tools: [weather],
    });
    const runtime = createRuntime();
    const first = await agent.ask('How warm is Paris?', { runtime });
    expect(first.response).toBe('Paris is 21 °C.');
    const second = await agent.ask([...first.messages, { role: 'user', content: 'And Rome, as JSON?' }], {
      runtime,
      output: Type.Object({ temperature: Type.Number() }),
    });
    expect(second.outcome).toBe('completed');
    expect(second.output).toEqual({ temperature: 25 });
    const history = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'How warm is Paris?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_w', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_w', content: '{"city":"Paris","temperature":21}' },
      { role: 'assistant', content: 'Paris is 21 °C.' },
      { role: 'user', content: 'And Rome, as JSON?' },
    ];
    expect(server.requests[2]?.body.messages).toEqual(history);
    expect(server.requests[3]?.body.messages.slice(0, history.length + 1)).toEqual([
      ...history,
      { role: 'assistant', content: 'not json' },
    ]);
    expect(server.requests[3]?.body.response_format).toEqual({
      type: 'json_schema',
      json_schema: {
        name: 'output',
        schema: {
          type: 'object',
          properties: { temperature: { type: 'number' } },
          required: ['temperature'],
        },
        strict: false,
      },
    });
  });
});

describe('code mode end to end, in bubblewrap', () => {
  const runtime = () => createRuntime({ engines: [quickjsEngine], sandboxes: [bwrapSandbox] });

  it('Responses: the exec program calls two tools with Promise.all, and its value reaches the model', async () => {
    server.reply(
      responsesStream([
        responseCreated(),
        ...functionCallEvents(0, 'fc_exec', 'call_exec', 'exec', [
          JSON.stringify({ source: program }).slice(0, 20),
          JSON.stringify({ source: program }).slice(20),
        ]),
        responseCompleted(usage({ input: 500, output: 80 })),
      ]),
      responsesStream(textAnswer(['Paris: 21 °C, Rome: 15:00.'])),
    );
    const agent = defineAgent({
      name: 'coder',
      model: openai()('gpt-5'),
      tools: [weather, clock],
      codeMode: codeMode(),
    });
    const run = await agent.ask('Paris weather and Rome time, please.', { runtime: runtime() });
    expect(run.outcome).toBe('completed');
    expect(run.sandbox?.name).toBe('bwrap');
    expect(run.response).toBe('Paris: 21 °C, Rome: 15:00.');
    // The model saw exec (not the tools), with the tools declared in its instructions.
    const first = server.requests[0]?.body;
    expect(first.tools.map((tool: { name: string }) => tool.name)).toEqual(['exec', 'wait', 'stop']);
    expect(first.instructions).toContain('weather(');
    const output = server.requests[1]?.body.input.find(
      (item: { type?: string }) => item.type === 'function_call_output',
    );
    expect(output.call_id).toBe('call_exec');
    expect(JSON.parse(output.output)).toMatchObject({
      status: 'completed',
      value: { parisTemperature: 21, romeTime: '15:00' },
    });
  });

  it("Chat Completions: the same program, its value in the second request's tool message", async () => {
    const argumentsText = JSON.stringify({ source: program });
    server.reply(
      chatStream([
        chatChunk({ role: 'assistant', content: null }),
        chatChunk({
          tool_calls: [
            toolCallFragment(0, { id: 'call_exec', name: 'exec', arguments: argumentsText.slice(0, 15) }),
          ],
        }),
        chatChunk({ tool_calls: [toolCallFragment(0, { arguments: argumentsText.slice(15) })] }),
        chatChunk({}, 'tool_calls'),
        chatUsageChunk({ prompt: 400, completion: 60 }),
      ]),
      chatStream(chatText(['Paris: 21 °C, Rome: 15:00.'])),
    );
    const agent = defineAgent({
      name: 'coder',
      model: openai().chat('gpt-4.1'),
      tools: [weather, clock],
      codeMode: codeMode(),
    });
    const run = await agent.ask('Paris weather and Rome time, please.', { runtime: runtime() });
    expect(run.outcome).toBe('completed');
    expect(run.response).toBe('Paris: 21 °C, Rome: 15:00.');
    const toolMessage = server.requests[1]?.body.messages.find(
      (message: { role: string }) => message.role === 'tool',
    );
    expect(toolMessage.tool_call_id).toBe('call_exec');
    expect(JSON.parse(toolMessage.content)).toMatchObject({
      status: 'completed',
      value: { parisTemperature: 21, romeTime: '15:00' },
    });
  });
});
