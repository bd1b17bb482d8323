// One step of a paused run, in a process of its own, on a session of a SQLite store:
//
//   node paused-run.mjs <path> <session id> <executions file> ask
//     asks with approvals: 'suspend'; the model calls `refund`, which needs approval. Prints
//     { outcome, approvalIds } once the run has suspended, then stays alive until it is killed.
//   node paused-run.mjs <path> <session id> <executions file> resume <decisions JSON> [on-go] [block]
//     resumes with those decisions (`-` for none: a pause with nothing left to decide). With
//     `on-go` it prints `ready` and waits for a `go` line first; with `block` the tool, once it has
//     recorded its execution, prints `in-tool` and never returns. Prints { outcome, error, response, seen }.
//   node paused-run.mjs <path> <session id> <executions file> ask-next
//     a plain ask on the session; prints { outcome, error, response, seen }.
//
// `refund` appends one line to the executions file each time it runs, outside the store, so the
// test counts executions across processes. `seen` is what the model read: roles and text.
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { createRuntime, defineAgent, defineTool } from '@ghost/core';
import { ScriptedModel } from '@ghost/core/testing';
import { sqliteSessionStore } from '@ghost/session-sqlite';
import Type from 'typebox';

const [path, id, executions, command, decisionsText, ...flags] = process.argv.slice(2);
const session = { id, actor: 'ana', lockTimeoutMs: 10_000 };

const refund = defineTool({
  name: 'refund',
  description: 'Refunds an order.',
  input: Type.Object({ order: Type.String() }),
  needsApproval: true,
  execute: ({ order }) => {
    appendFileSync(executions, `refund ${order} by ${process.pid}\n`);
    if (!flags.includes('block')) return `refunded ${order}`;
    process.stdout.write('in-tool\n');
    return new Promise(() => {});
  },
});

const steps = {
  ask: [{ toolCalls: [{ id: 'c1', name: 'refund', input: { order: '1042' } }] }],
  resume: [{ text: 'Refunded.' }],
  'ask-next': [{ text: 'You asked for a refund of 1042.' }],
};
const model = new ScriptedModel(steps[command]);
const agent = defineAgent({ name: 'support', model, tools: [refund] });
const sessionStore = sqliteSessionStore({ path });
const runtime = createRuntime({ sessionStore });

function print(value) {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

function report(run) {
  print({
    outcome: run.outcome,
    error: run.error === undefined ? undefined : { name: run.error.name, code: run.error.code },
    response: run.response,
    seen: model.calls.map((call) =>
      call.messages.map((message) => ({
        role: message.role,
        content: typeof message.content === 'string' ? message.content : '',
      })),
    ),
  });
}

function go() {
  return new Promise((resolve) => {
    process.stdout.write('ready\n');
    createInterface({ input: process.stdin }).on('line', (line) => {
      if (line === 'go') resolve();
    });
  });
}

if (command === 'ask') {
  const run = await agent.ask('Refund order 1042', { runtime, session, approvals: 'suspend' });
  print({ outcome: run.outcome, approvalIds: run.pendingApprovals.map((pending) => pending.approvalId) });
  // The pause is saved and announced; the test kills this process now.
  setInterval(() => {}, 60_000);
} else {
  if (command === 'resume') {
    if (flags.includes('on-go')) await go();
    const decisions = decisionsText === '-' ? {} : { decisions: JSON.parse(decisionsText) };
    report(await agent.resume({ runtime, session, ...decisions }));
  } else {
    report(await agent.ask('What did I ask?', { runtime, session }));
  }
  await runtime.close();
  await sessionStore.close();
  process.exit(0);
}
