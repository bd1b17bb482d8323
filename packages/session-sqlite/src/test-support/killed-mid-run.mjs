// Starts one ask on a session whose tool never returns, and prints `in-tool` once the tool runs, so
// the test can SIGKILL this process in the middle of the run:
// node killed-mid-run.mjs <path> <session id> <actor>
import { createRuntime, defineAgent, defineTool } from '@ghost/core';
import { ScriptedModel } from '@ghost/core/testing';
import { sqliteSessionStore } from '@ghost/session-sqlite';
import Type from 'typebox';

const [path, id, actor] = process.argv.slice(2);
const stall = defineTool({
  name: 'stall',
  description: 'Never returns.',
  input: Type.Object({}),
  execute: () => {
    process.stdout.write('in-tool\n');
    return new Promise(() => {});
  },
});
const model = new ScriptedModel([{ toolCalls: [{ name: 'stall', input: {} }] }, { text: 'never said' }]);
const agent = defineAgent({ name: 'stalls', model, tools: [stall] });
const runtime = createRuntime({ sessionStore: sqliteSessionStore({ path }) });
// Keeps the process alive while the tool "runs"; the test kills it.
setInterval(() => {}, 60_000);
await agent.ask('the question that never ends', { runtime, session: { id, actor } });
