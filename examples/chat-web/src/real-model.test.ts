import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HttpAgent } from '@ag-ui/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseChatModel } from './chat-model.js';
import { type ChatServer, startChatServer } from './chat-server.js';

/** One Chat Completions chunk as a server streams it. */
function chunk(delta: Record<string, unknown>, finishReason: string | null = null): string {
  const body = {
    id: 'chatcmpl-shop',
    object: 'chat.completion.chunk',
    created: 1_764_806_400,
    model: 'shop',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
  return `data: ${JSON.stringify(body)}\n\n`;
}

const program = `const found = await tools.lookup_order({ order: '1043' });
text(found.status);`;

/** What the model answers: a program, then the text. */
const answers = [
  [
    chunk({ role: 'assistant', content: '' }),
    chunk({
      tool_calls: [
        { index: 0, id: 'call_exec', type: 'function', function: { name: 'exec', arguments: '' } },
      ],
    }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: JSON.stringify({ source: program }) } }] }),
    chunk({}, 'tool_calls'),
  ],
  [
    chunk({ role: 'assistant', content: 'Order 1043 is ' }),
    chunk({ content: 'being packed.' }),
    chunk({}, 'stop'),
  ],
];

async function bodyOf(request: IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const part of request) text += part;
  return JSON.parse(text) as Record<string, unknown>;
}

// A loopback server speaking OpenAI's Chat Completions stream, as Ollama or vLLM would, stands in
// for a hosted model: the app takes it from GHOST_MODEL like any other.
describe('chat-web with a model from GHOST_MODEL', () => {
  const requests: Record<string, unknown>[] = [];
  let modelServer: Server;
  let folder = '';
  let server: ChatServer;

  beforeAll(async () => {
    modelServer = createServer((request, response) => {
      void bodyOf(request).then((body) => {
        requests.push(body);
        const answer = answers[requests.length - 1] ?? [];
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const event of answer) response.write(event);
        response.end('data: [DONE]\n\n');
      });
    });
    await new Promise<void>((resolve) => modelServer.listen(0, '127.0.0.1', resolve));
    const baseURL = `http://127.0.0.1:${(modelServer.address() as AddressInfo).port}/v1`;
    folder = await mkdtemp(join(tmpdir(), 'ghost-chat-web-model-'));
    server = await startChatServer({
      sessionsPath: join(folder, 'sessions.db'),
      client: 'built',
      port: 0,
      model: chooseChatModel({ GHOST_MODEL: `openai-compatible:${baseURL}#shop` }),
    });
  });

  afterAll(async () => {
    await server?.close();
    await new Promise((resolve) => modelServer?.close(resolve));
    await rm(folder, { recursive: true, force: true });
  });

  it('names the model and answers through it, with the program it wrote', async () => {
    const info = (await (await fetch(`${server.url}/api/info`)).json()) as { model: string };
    expect(info.model).toMatch(/^openai-compatible:http:\/\/127\.0\.0\.1:\d+\/v1#shop$/);

    const agent = new HttpAgent({ url: `${server.url}/api/agent`, threadId: 'thread-model' });
    agent.messages.push({ id: 'user-1', role: 'user', content: 'Where is order 1043?' });
    const calls: string[] = [];
    let text = '';
    await agent.runAgent(
      {},
      {
        onToolCallStartEvent: ({ event }) => {
          calls.push(event.toolCallName);
        },
        onTextMessageContentEvent: ({ event }) => {
          text += event.delta;
        },
      },
    );
    expect(calls).toEqual(['lookup_order']);
    expect(text).toBe('Order 1043 is being packed.');
    expect(requests).toHaveLength(2);
    const result = ((requests[1]?.messages ?? []) as { role: string; content?: string }[]).find(
      (message) => message.role === 'tool',
    );
    expect(result?.content).toContain('being packed');

    const history = (await (await fetch(`${server.url}/api/history?threadId=thread-model`)).json()) as {
      items: unknown[];
    };
    expect(history.items).toEqual([
      { kind: 'user', text: 'Where is order 1043?' },
      { kind: 'program', source: program },
      { kind: 'assistant', text: 'Order 1043 is being packed.' },
    ]);
  });
});
