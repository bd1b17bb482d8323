// Runs `runs` asks of a real agent on one session of a SQLite store, one after another, as an
// application process would: node agent-turns.mjs <path> <session id> <actor> <runs> <label>
// Prints one JSON line per run ({ run, outcome, seen }) and exits 1 on the first run that fails.
// The id and actor may be given as JSON strings (prefix `json:`), for characters a shell mangles.
import { createRuntime, defineAgent, defineTool } from '@ghost/core';
import { ScriptedModel } from '@ghost/core/testing';
import { sqliteSessionStore } from '@ghost/session-sqlite';
import Type from 'typebox';

const [path, rawId, rawActor, runsText, label] = process.argv.slice(2);
const decode = (value) => (value.startsWith('json:') ? JSON.parse(value.slice(5)) : value);
const id = decode(rawId);
const actor = decode(rawActor);
const runs = Number(runsText);

const note = defineTool({
  name: 'note',
  description: 'Notes a number.',
  input: Type.Object({ n: Type.Number() }),
  execute: ({ n }) => ({ noted: n }),
});
const sessionStore = sqliteSessionStore({ path });
const runtime = createRuntime({ sessionStore });
let failed = false;
for (let run = 0; run < runs && !failed; run += 1) {
  const model = new ScriptedModel([
    { toolCalls: [{ name: 'note', input: { n: run } }] },
    { text: `${label} answer ${run}` },
  ]);
  const agent = defineAgent({ name: 'turns', model, tools: [note] });
  const result = await agent.ask(`${label} question ${run}`, {
    runtime,
    session: { id, actor, lockTimeoutMs: 60_000 },
  });
  const seen = model.calls[0]?.messages.length ?? 0;
  process.stdout.write(
    `${JSON.stringify({ run, outcome: result.outcome, seen, error: result.error?.code })}\n`,
  );
  failed = result.outcome !== 'completed';
}
await runtime.close();
await sessionStore.close();
process.exitCode = failed ? 1 : 0;
