// Agents run as tools (agent.asTool()) inside one run, from @ghost/core's built output, with
// scripted models (no provider, no I/O): what a nested agent call costs beside a bare
// `agent.ask` and beside a plain tool call, and what each nested event costs a stream that asked
// for them (`includeAgentEvents`). Run alone with `node bench/nested-agents.js` after building
// (`pnpm exec turbo run build --filter=@ghost/bench...`); `pnpm bench` runs it through run.js.
import { createRuntime, defineAgent, defineTool } from '@ghost/core';
import { ScriptedModel } from '@ghost/core/testing';
import Type from 'typebox';
import { measure, printTable } from './measure.js';

const runtime = createRuntime();
const noop = defineTool({
  name: 'noop',
  description: 'Does nothing.',
  input: Type.Object({ input: Type.String() }),
  execute: () => 'done',
});
const calls = 64;
const eventsPerAnswer = 1_000;

/** A fresh agent whose model answers `steps` (a scripted model is used up by one run). */
const agentWith = (name, steps, tools = []) =>
  defineAgent({ name, model: new ScriptedModel(steps), tools, limits: { maxParallelToolCalls: calls } });

/** One turn calling `toolName` `count` times at once, then an answer. */
const callingTurns = (toolName, count) => [
  {
    toolCalls: Array.from({ length: count }, (_, index) => ({
      name: toolName,
      input: { input: `task ${index}` },
    })),
  },
  { text: 'done' },
];

/** An agent tool whose agent answers with one text part; its scripted model has `runs` answers. */
function helperTool(runs, text = 'answer') {
  return agentWith(
    'helper',
    Array.from({ length: runs }, () => ({ text })),
  ).asTool();
}

async function drain(stream) {
  let count = 0;
  for await (const _event of stream) count += 1;
  await stream.run;
  return count;
}

/** Measures nested agent calls and nested events; print the result with printNestedAgentFigures. */
export async function nestedAgentFigures() {
  const results = [
    await measure('bare agent.ask, one model turn', () =>
      agentWith('helper', [{ text: 'answer' }]).ask('?', { runtime }),
    ),
    await measure(`run, ${calls} plain tool calls in one turn`, () =>
      agentWith('lead', callingTurns('noop', calls), [noop]).ask('?', { runtime }),
    ),
    await measure(`run, ${calls} nested agent calls in one turn`, () =>
      agentWith('lead', callingTurns('helper', calls), [helperTool(calls)]).ask('?', { runtime }),
    ),
    await measure('run, one nested agent call', () =>
      agentWith('lead', callingTurns('helper', 1), [helperTool(1)]).ask('?', { runtime }),
    ),
    await measure('run, one plain tool call', () =>
      agentWith('lead', callingTurns('noop', 1), [noop]).ask('?', { runtime }),
    ),
  ];
  const chunks = Array.from({ length: eventsPerAnswer }, () => 'x');
  const nestedStream = (includeAgentEvents) =>
    agentWith('lead', callingTurns('helper', 1), [helperTool(1, chunks)]).streamAsk('?', {
      runtime,
      includeAgentEvents,
    });
  const streamRuns = { runs: 50, warmup: 5 };
  const streamed = [
    await measure(
      `stream, nested agent of ${eventsPerAnswer} text parts, without its events`,
      () => drain(nestedStream(false)),
      streamRuns,
    ),
    await measure(
      `stream, nested agent of ${eventsPerAnswer} text parts, with includeAgentEvents`,
      () => drain(nestedStream(true)),
      streamRuns,
    ),
    await measure(
      `stream, bare agent of ${eventsPerAnswer} text parts`,
      () => drain(agentWith('helper', [{ text: chunks }]).streamAsk('?', { runtime })),
      streamRuns,
    ),
  ];
  const nestedEvents = (await drain(nestedStream(true))) - (await drain(nestedStream(false)));
  return { results, streamed, nestedEvents };
}

/** Prints nestedAgentFigures' table and the two derived costs, each beside its target. */
export function printNestedAgentFigures({ results, streamed, nestedEvents }) {
  printTable([...results, ...streamed]);
  const [bare, plainMany, nestedMany, nestedOne, plainOne] = results;
  const perNestedCall = (nestedMany.median - plainMany.median) / calls;
  const micro = (milliseconds) => `${(milliseconds * 1000).toFixed(1)} µs`;
  console.log(
    `a nested agent call, its agent's model turn included, over a plain tool call: ${micro(perNestedCall)} each (${calls} in one turn), ${micro(nestedOne.median - plainOne.median)} alone (target: under 1 ms); the same agent asked on its own (agent.ask): ${micro(bare.median)}`,
  );
  const [withoutEvents, withEvents] = streamed;
  console.log(
    `each nested event streamed (includeAgentEvents): ${(((withEvents.median - withoutEvents.median) / nestedEvents) * 1000).toFixed(2)} µs (${nestedEvents} events; target: under 20 µs)`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(`Ghost nested agents on Node ${process.version}, ${new Date().toISOString()}`);
  printNestedAgentFigures(await nestedAgentFigures());
}
