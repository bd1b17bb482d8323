import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { chooseDemoModel, defaultAnthropicModel, defaultOpenAIModel } from './demo-model.js';
import { researchProgram } from './research-agent.js';
import { runDemo } from './run-demo.js';

/** One Chat Completions chunk as a server streams it. */
function chunk(delta: Record<string, unknown>, finishReason: string | null = null): string {
  const body = {
    id: 'chatcmpl-demo',
    object: 'chat.completion.chunk',
    created: 1_764_806_400,
    model: 'research-demo',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
  return `data: ${JSON.stringify(body)}\n\n`;
}

/** The two answers a model gives the research task: one exec call, then the text. */
const answers = [
  [
    chunk({ role: 'assistant', content: '' }),
    chunk({
      tool_calls: [
        { index: 0, id: 'call_exec', type: 'function', function: { name: 'exec', arguments: '' } },
      ],
    }),
    chunk({
      tool_calls: [{ index: 0, function: { arguments: JSON.stringify({ source: researchProgram }) } }],
    }),
    chunk({}, 'tool_calls'),
  ],
  [
    chunk({ role: 'assistant', content: 'Refunds are available within 30 days; ' }),
    chunk({ content: 'standard shipping takes three to five days.' }),
    chunk({}, 'stop'),
  ],
];

async function readBody(request: IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const part of request) text += part;
  return JSON.parse(text) as Record<string, unknown>;
}

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** A loopback server speaking OpenAI's Chat Completions stream, as Ollama or vLLM would. */
async function startModelServer(requests: Record<string, unknown>[]): Promise<string> {
  server = createServer((request, response) => {
    void readBody(request).then((body) => {
      requests.push(body);
      const answer = answers[requests.length - 1];
      if (request.url !== '/v1/chat/completions' || answer === undefined) {
        response.writeHead(404, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { message: 'no such answer' } }));
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const event of answer) response.write(event);
      response.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

const folders: string[] = [];
afterEach(async () => {
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});

async function temporaryFolder(): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'ghost-demo-test-'));
  folders.push(folder);
  return folder;
}

describe('the demo with a real model', () => {
  it('picks the model from GHOST_MODEL, then the API keys, else the scripted one', () => {
    expect(chooseDemoModel({ GHOST_MODEL: 'anthropic:claude-opus-4-1', OPENAI_API_KEY: 'k' }).model).toBe(
      'anthropic:claude-opus-4-1',
    );
    expect(chooseDemoModel({ OPENAI_API_KEY: 'k', ANTHROPIC_API_KEY: 'k' }).model).toBe(defaultOpenAIModel);
    expect(chooseDemoModel({ ANTHROPIC_API_KEY: 'k' }).model).toBe(defaultAnthropicModel);
    const scripted = chooseDemoModel({});
    expect(scripted.isScripted).toBe(true);
    expect(scripted.description).toMatch(/set OPENAI_API_KEY, ANTHROPIC_API_KEY or GHOST_MODEL/);
  });

  it('talks to an OpenAI-compatible server named by GHOST_MODEL, running its program in the sandbox', async () => {
    const requests: Record<string, unknown>[] = [];
    const baseURL = await startModelServer(requests);
    let output = '';
    const outcome = await runDemo(
      (text) => {
        output += text;
      },
      {
        GHOST_MODEL: `openai-compatible:${baseURL}#research-demo`,
        GHOST_DEMO_CONVERSATION: join(await temporaryFolder(), 'conversation.db'),
      },
    );
    expect(outcome).toBe('completed');
    expect(output).toContain(`The model is openai-compatible:${baseURL}#research-demo (from GHOST_MODEL).`);
    expect(output).toContain("[program] quickjs in sandbox 'bwrap':");
    expect(output).toMatch(
      /\[tool\] help_center_lookup \(from the program\) ok in \d+ ms: Refunds are available/,
    );
    expect(output).toContain(
      'Refunds are available within 30 days; standard shipping takes three to five days.',
    );
    expect(requests).toHaveLength(2);
    expect(requests[0]).toMatchObject({ model: 'research-demo', stream: true });
    const tools = ((requests[0]?.tools ?? []) as { function: { name: string } }[]).map(
      (tool) => tool.function.name,
    );
    expect(tools).toEqual(expect.arrayContaining(['exec', 'wait', 'stop']));
    const messages = requests[1]?.messages as { role: string; content?: string }[];
    const result = messages.find((message) => message.role === 'tool');
    expect(result?.content).toContain('Standard shipping takes three to five days.');
  });
});
