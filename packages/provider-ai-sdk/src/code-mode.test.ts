import { createOpenAI } from '@ai-sdk/openai';
import { codeMode } from '@ghost/code-mode';
import { createRuntime, defineAgent, defineTool } from '@ghost/core';
import { quickjsEngine } from '@ghost/engine-quickjs';
import { bwrapSandbox } from '@ghost/sandbox-bwrap';
import Type from 'typebox';
import { afterEach, describe, expect, it } from 'vitest';
import { fromAISDK } from './from-ai-sdk.js';
import { LoopbackServer } from './test-support/loopback-server.js';
import { ResponsesEvents } from './test-support/openai-wire.js';

// Code mode end to end through an AI SDK model: @ai-sdk/openai's Responses model against the
// loopback server asks for one `exec` whose program calls two tools with Promise.all; Ghost runs
// it in QuickJS inside bubblewrap, and the program's result goes back in the next request.

let server: LoopbackServer;
afterEach(async () => {
  await server?.close();
});

const program = [
  "const [refunds, stock] = await Promise.all([tools.lookup({ topic: 'refunds' }), tools.inventory({ sku: 'A-1' })]);",
  "refunds.text + ' ' + stock.count + ' in stock.'",
].join('\n');

describe('code mode through fromAISDK', () => {
  it('runs the program the model wrote in the sandbox and returns its result to the model', async () => {
    const usage = { input_tokens: 900, output_tokens: 60, total_tokens: 960 };
    const source = JSON.stringify({ source: program });
    server = await LoopbackServer.start([
      new ResponsesEvents('resp_exec')
        .functionCallAdded(0, 'fc_exec', 'call_exec', 'exec')
        .functionArguments(0, 'fc_exec', source.slice(0, 40))
        .functionArguments(0, 'fc_exec', source.slice(40))
        .functionCallDone(0, 'fc_exec', 'call_exec', 'exec', source)
        .completed(usage),
      new ResponsesEvents('resp_answer')
        .message(0, 'msg_answer', ['Refunds take 5 business days; ', '3 in stock.'])
        .completed(usage),
    ]);
    const called: string[] = [];
    const lookup = defineTool({
      name: 'lookup',
      description: 'Returns the help-center entry for a topic.',
      input: Type.Object({ topic: Type.String() }),
      execute: ({ topic }) => {
        called.push(`lookup ${topic}`);
        return { topic, text: 'Refunds take 5 business days.' };
      },
    });
    const inventory = defineTool({
      name: 'inventory',
      description: 'Returns how many of a product are in stock.',
      input: Type.Object({ sku: Type.String() }),
      execute: ({ sku }) => {
        called.push(`inventory ${sku}`);
        return { sku, count: 3 };
      },
    });
    const openai = createOpenAI({ apiKey: 'sk-test', baseURL: `${server.origin}/v1` });
    const agent = defineAgent({
      name: 'support',
      instructions: 'Answer from the help center and the stock list.',
      model: fromAISDK(openai('gpt-5')),
      tools: [lookup, inventory],
      codeMode: codeMode(),
    });
    const runtime = createRuntime({ engines: [quickjsEngine], sandboxes: [bwrapSandbox] });

    const run = await agent.ask('How long do refunds take, and is A-1 in stock?', {
      runtime,
      timeoutMs: 60_000,
    });

    expect(run.error).toBeUndefined();
    expect(run.outcome).toBe('completed');
    expect(run.sandbox?.name).toBe('bwrap');
    expect(run.response).toBe('Refunds take 5 business days; 3 in stock.');
    expect(run.usage).toMatchObject({ inputTokens: 1800, outputTokens: 120 });
    expect(called.sort()).toEqual(['inventory A-1', 'lookup refunds']);

    expect(server.requests).toHaveLength(2);
    const toolNames = (server.body(0).tools as { name: string }[]).map((tool) => tool.name);
    expect(toolNames.sort()).toEqual(['exec', 'stop', 'wait']);
    // The catalog of the program's tools reaches the model in its instructions.
    expect(JSON.stringify(server.body(0).input)).toContain('lookup(');
    const input = server.body(1).input as { type?: string; call_id?: string; output?: string }[];
    expect(input.find((item) => item.type === 'function_call')).toMatchObject({
      call_id: 'call_exec',
      name: 'exec',
    });
    const result = input.find((item) => item.type === 'function_call_output');
    expect(result?.call_id).toBe('call_exec');
    expect(JSON.parse(result?.output ?? '{}')).toMatchObject({
      status: 'completed',
      value: 'Refunds take 5 business days. 3 in stock.',
    });
  });
});
