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
  functionCallEvents,
  reasoningSummaryEvents,
  responseCompleted,
  responseCreated,
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
      { type: 'function_call', call_id: 'call_w', name: 'weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call', call_id: 'call_c', name: 'clock', arguments: '{"city":"Rome"}' },
      { type: 'function_call_output', call_id: 'call_w', output: '{"city":"Paris","temperature":21}' },
      { type: 'function_call_output', call_id: 'call_c', output: '{"city":"Rome","time":"15:00"}' },
    ]);
  });

  it('shows a retried request as a model_retry event when the run streams', async () => {
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
