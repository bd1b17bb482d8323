import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type AgUiServedAgent, agUiHandler } from '@ghost/ag-ui';
import { codeMode } from '@ghost/code-mode';
import {
  type Agent,
  type AgentInput,
  type AskOptions,
  createRuntime,
  defineAgent,
  type RunStream,
} from '@ghost/core';
import { sqliteSessionStore } from '@ghost/session-sqlite';
import type { ViteDevServer } from 'vite';
import { type ChatModel, chooseChatModel } from './chat-model.js';
import { readConversation } from './conversation-history.js';
import { createShopTools, type ToolActivity } from './shop-tools.js';
import { serveStaticFile } from './static-files.js';

/** What the server reports as it works: each run's end, and what the slow and approved tools did. */
export type ServerActivity =
  | ({ readonly kind: 'tool' } & ToolActivity)
  | { readonly kind: 'run'; readonly threadId: string; readonly outcome: string };

/** The options of {@link startChatServer}. */
export interface ChatServerOptions {
  /** The SQLite file conversations are kept in; created when missing. */
  readonly sessionsPath: string;
  /** `'vite'`: Vite's dev server serves the page from `src/client`; `'built'`: the files of `vite build`. */
  readonly client: 'vite' | 'built';
  /** Default `127.0.0.1`. */
  readonly host?: string;
  /** Default 3000; 0 picks a free port. */
  readonly port?: number;
  /** The model; default {@link chooseChatModel} of the environment. */
  readonly model?: ChatModel;
  readonly onActivity?: (activity: ServerActivity) => void;
}

/** A running chat server. */
export interface ChatServer {
  /** Such as `http://127.0.0.1:3000`. */
  readonly url: string;
  readonly model: ChatModel;
  /** Stops taking requests, cancels runs still streaming, and closes the runtime and the store. */
  close(): Promise<void>;
}

/**
 * Who is chatting. This example has no sign-in, so every thread belongs to one local person; an
 * application takes the actor from its own authentication, never from the request's body.
 */
const localActor = 'local-user';

/** The folder holding package.json, from `src/` when run by tests and from `dist/server/` when built. */
function packageRoot(): string {
  let folder = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(folder, 'package.json'))) folder = dirname(folder);
  return folder;
}

function createShopAgent(model: ChatModel, report: (activity: ToolActivity) => void): Agent {
  return defineAgent({
    name: 'shop-assistant',
    instructions:
      'You help the staff of a small shop that sells teapots, cups and grinders. Look orders up and run the sales report with a program; refund an order with refund_order when asked (a person approves it). Answer in one or two short sentences.',
    model: model.model,
    tools: createShopTools(report),
    // Programs run in QuickJS inside the native sandbox (bubblewrap on Linux), which code mode
    // refuses to run without.
    codeMode: codeMode({ engine: 'quickjs' }),
  });
}

/** The agent as the handler serves it, telling `report` how each of its runs ended. */
function reportingRunEnds(
  agent: Agent,
  report: (threadId: string, outcome: string) => void,
): AgUiServedAgent {
  const watch = (stream: RunStream, threadId: string): RunStream => {
    stream.run.then(
      (run) => report(threadId, run.outcome ?? 'unknown'),
      () => report(threadId, 'failed'),
    );
    return stream;
  };
  const threadOf = (options: { session?: { id: string } } | undefined) => options?.session?.id ?? '';
  return {
    tools: agent.tools,
    toolSources: agent.toolSources,
    streamAsk: (input: AgentInput, options?: AskOptions) =>
      watch(agent.streamAsk(input, options), threadOf(options)),
    streamResume: (options) => watch(agent.streamResume(options), threadOf(options)),
  };
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
  response.end(JSON.stringify(body));
}

/**
 * Starts the chat: one HTTP server on one port for the page and its API.
 *
 * - `POST /api/agent`: the agent over AG-UI (`agUiHandler`), each thread a session in SQLite;
 * - `GET /api/history?threadId=...`: the stored conversation and the approvals it waits for, so a
 *   reloaded page shows both;
 * - `GET /api/info`: which model answers;
 * - anything else: the page, from Vite's dev server or from `dist/client`.
 */
export async function startChatServer(options: ChatServerOptions): Promise<ChatServer> {
  const report = options.onActivity ?? (() => {});
  const model = options.model ?? chooseChatModel();
  const agent = createShopAgent(model, (activity) => report({ kind: 'tool', ...activity }));
  const store = sqliteSessionStore({ path: options.sessionsPath });
  // Built-in plugins ('quickjs', 'openai') are imported from this package, wherever it runs from.
  const runtime = createRuntime({ sessionStore: store, importModule: (specifier) => import(specifier) });
  const handleAgent = agUiHandler(
    reportingRunEnds(agent, (threadId, outcome) => report({ kind: 'run', threadId, outcome })),
    {
      askOptions: () => ({ runtime, timeoutMs: 10 * 60_000 }),
      actor: () => localActor,
      // The page sends only its new message: the session holds the thread.
      messagesSnapshot: false,
    },
  );
  const root = packageRoot();
  let vite: ViteDevServer | undefined;
  const running = new Set<Promise<unknown>>();

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (url.pathname === '/api/agent') return handleAgent(request, response);
    if (url.pathname === '/api/info') {
      return sendJson(response, 200, { model: model.name, isScripted: model.isScripted });
    }
    if (url.pathname === '/api/history') {
      const threadId = url.searchParams.get('threadId') ?? '';
      if (threadId === '')
        return sendJson(response, 400, { error: 'Name the thread: /api/history?threadId=...' });
      const conversation = await readConversation(runtime, { id: threadId, actor: localActor });
      return sendJson(response, 200, { threadId, ...conversation });
    }
    if (vite !== undefined) {
      vite.middlewares(request, response, () => sendJson(response, 404, { error: 'Not found.' }));
      return;
    }
    return serveStaticFile(join(root, 'dist', 'client'), request, response);
  };

  const server: Server = createServer((request, response) => {
    const served = handle(request, response).catch((error: unknown) => {
      if (!response.headersSent)
        sendJson(response, 500, { error: String((error as Error)?.message ?? error) });
      else response.destroy();
    });
    running.add(served);
    void served.finally(() => running.delete(served));
  });
  try {
    if (options.client === 'vite') {
      const { createServer: createViteServer } = await import('vite');
      vite = await createViteServer({
        configFile: join(root, 'vite.config.ts'),
        server: { middlewareMode: true, hmr: { server } },
        appType: 'spa',
      });
    }
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 3000, options.host ?? '127.0.0.1', resolve);
    });
  } catch (error) {
    await vite?.close();
    await runtime.close();
    await store.close();
    throw error;
  }
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;

  let closing: Promise<void> | undefined;
  const close = async () => {
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    // Streaming runs end when their connection does: each is cancelled and cleans up.
    server.closeAllConnections();
    await stopped;
    await Promise.allSettled([...running]);
    await vite?.close();
    await runtime.close();
    await store.close();
  };
  return {
    url: `http://${host}:${port}`,
    model,
    close: () => {
      closing ??= close();
      return closing;
    },
  };
}
