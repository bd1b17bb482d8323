// An application server for the reliability tests: one runtime and one PostgreSQL session store,
// driven by JSON lines on stdin, answering with JSON lines on stdout. It imports the BUILT packages
// (no source condition here), as an application would.
//
//   GHOST_PG_URL      the database's connection string
//   GHOST_PG_SCHEMA   the store's schema
//
// Commands: { requestId, op: 'ask', text, steps, session, waitInTool? } runs agent.ask with a
// ScriptedModel of `steps` (a `slow_step` tool call in them waits, after printing
// { event: 'in-tool' }, until { op: 'continue' } or for ever); { requestId, op: 'close' } closes
// the store and exits. An unhandled rejection or exception prints { fatal } and exits 70.
import { createInterface } from 'node:readline';
import { createRuntime, defineAgent, defineTool } from '@ghost/core';
import { ScriptedModel } from '@ghost/core/testing';
import { postgresSessionStore } from '@ghost/session-postgres';
import Type from 'typebox';

function send(value) {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

function fatal(kind, error) {
  send({ fatal: `${kind}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}` });
  process.exit(70);
}
process.on('unhandledRejection', (reason) => fatal('unhandled rejection', reason));
process.on('uncaughtException', (error) => fatal('uncaught exception', error));

const store = postgresSessionStore(
  { connectionString: process.env.GHOST_PG_URL, connectionTimeoutMs: 2_000 },
  { schema: process.env.GHOST_PG_SCHEMA },
);
const runtime = createRuntime({ sessionStore: store });

let continueWaiting = [];
const slowStep = defineTool({
  name: 'slow_step',
  description: 'A step that takes as long as the test wants.',
  input: Type.Object({}),
  execute: async () => {
    send({ event: 'in-tool' });
    await new Promise((resolve) => continueWaiting.push(resolve));
    return 'slow step done';
  },
});

function describeError(error) {
  if (error === undefined) return undefined;
  return {
    name: error.name,
    code: error.code,
    reason: error.reason,
    store: error.store,
    message: error.message,
  };
}

async function ask(command) {
  const model = new ScriptedModel(command.steps);
  const agent = defineAgent({ name: 'server', model, tools: [slowStep] });
  const run = await agent.ask(command.text, { runtime, session: command.session });
  return {
    outcome: run.outcome,
    response: run.response,
    error: describeError(run.error),
    seen: model.calls.map((call) =>
      call.messages.map((message) => ({
        role: message.role,
        content: typeof message.content === 'string' ? message.content : '',
      })),
    ),
  };
}

async function handle(command) {
  switch (command.op) {
    case 'ask':
      return ask(command);
    case 'continue': {
      const waiting = continueWaiting;
      continueWaiting = [];
      for (const resolve of waiting) resolve();
      return { continued: waiting.length };
    }
    case 'close':
      await store.close();
      await runtime.close();
      return { closed: true };
    default:
      throw new Error(`unknown op ${command.op}`);
  }
}

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const command = JSON.parse(line);
  handle(command).then(
    (result) => {
      send({ requestId: command.requestId, ...result });
      if (command.op === 'close') process.exit(0);
    },
    (error) => send({ requestId: command.requestId, thrown: describeError(error) }),
  );
});
send({ event: 'ready' });
