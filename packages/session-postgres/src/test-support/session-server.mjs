// An application server for the reliability tests: one runtime and one PostgreSQL session store,
// driven by JSON lines on stdin, answering with JSON lines on stdout. It imports the BUILT packages
// (no source condition here), as an application would.
//
//   GHOST_PG_URL      the database's connection string
//   GHOST_PG_SCHEMA   the store's schema
//   GHOST_EXECUTIONS  a file the `refund` tool appends a line to each time it runs (optional)
//
// Commands: { requestId, op: 'ask', text, steps, session, waitInTool? } runs agent.ask with a
// ScriptedModel of `steps` (a `slow_step` tool call in them waits, after printing
// { event: 'in-tool' }, until { op: 'continue' } or for ever; `approvals: 'suspend'` suspends at a
// `refund` call, which needs approval, and the reply lists the `approvalIds`);
// { requestId, op: 'resume', session, decisions?, steps, blockInRefund? } runs agent.resume (with
// `blockInRefund`, `refund` prints { event: 'in-refund' } after recording its execution and never
// returns); { requestId, op: 'close' } closes
// the store and exits. An unhandled rejection or exception prints { fatal } and exits 70.
import { appendFileSync } from 'node:fs';
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

/** A tool that needs approval and records each execution outside the store. */
function refundTool({ blockInRefund = false } = {}) {
  return defineTool({
    name: 'refund',
    description: 'Refunds an order.',
    input: Type.Object({ order: Type.String() }),
    needsApproval: true,
    execute: ({ order }) => {
      appendFileSync(process.env.GHOST_EXECUTIONS, `refund ${order} by ${process.pid}\n`);
      if (!blockInRefund) return `refunded ${order}`;
      send({ event: 'in-refund' });
      return new Promise(() => {});
    },
  });
}

function formatError(error) {
  if (error === undefined) return undefined;
  return {
    name: error.name,
    code: error.code,
    reason: error.reason,
    store: error.store,
    message: error.message,
  };
}

function serverAgent(command) {
  const model = new ScriptedModel(command.steps);
  const agent = defineAgent({ name: 'server', model, tools: [slowStep, refundTool(command)] });
  return { model, agent };
}

async function ask(command) {
  const { model, agent } = serverAgent(command);
  const approvals = command.approvals === undefined ? {} : { approvals: command.approvals };
  const run = await agent.ask(command.text, { runtime, session: command.session, ...approvals });
  return report(run, model);
}

async function resume(command) {
  const { model, agent } = serverAgent(command);
  const decisions = command.decisions === undefined ? {} : { decisions: command.decisions };
  return report(await agent.resume({ runtime, session: command.session, ...decisions }), model);
}

function report(run, model) {
  return {
    outcome: run.outcome,
    approvalIds: run.pendingApprovals.map((pending) => pending.approvalId),
    response: run.response,
    error: formatError(run.error),
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
    case 'resume':
      return resume(command);
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
    (error) => send({ requestId: command.requestId, thrown: formatError(error) }),
  );
});
send({ event: 'ready' });
