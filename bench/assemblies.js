// Assemblies (@ghost/assemblies) from their built output, with scripted models (no provider, no
// I/O): what the assembly layer adds per step beside a bare `agent.ask` of the same agent, what
// each nested event costs a stream that asked for them (`includeAgentEvents`), and 100 parallel
// invocations in one Workflow: time and the parent's heap. Run alone with
// `node --expose-gc bench/assemblies.js` after building
// (`pnpm exec turbo run build --filter=@ghost/bench...`); `pnpm bench` runs it through run.js.
import { defineGraph, defineSwarm, defineWorkflow } from '@ghost/assemblies';
import { createRuntime, defineAgent } from '@ghost/core';
import { ScriptedModel } from '@ghost/core/testing';
import { measure, printTable } from './measure.js';

const runtime = createRuntime();
const sequentialSteps = 64;
const parallelInvocations = 100;
const eventsPerAnswer = 1_000;

/** A fresh agent answering `answers` times with `text` (a scripted model is used up by its answers). */
const answering = (name, answers, text = 'answer') =>
  defineAgent({ name, model: new ScriptedModel(Array.from({ length: answers }, () => ({ text }))) });

/** A workflow invoking a fresh agent `count` times, one after the other. */
const sequential = (count, text) => {
  const agent = answering('helper', count, text);
  return defineWorkflow({
    name: 'sequential',
    async perform(ctx, input) {
      let last;
      for (let index = 0; index < count; index += 1) last = await ctx.invoke(agent, input);
      return last.response;
    },
  });
};

const parallel = (count) => {
  const agent = answering('helper', count);
  return defineWorkflow({
    name: 'parallel',
    perform: async (ctx, input) =>
      (
        await ctx.parallel(
          Array.from({ length: count }, () => ctx.invoke(agent, input)),
          { maxConcurrency: count },
        )
      ).length,
  });
};

/** A swarm whose first member hands off once, to a second that answers: two member turns. */
const handingOff = () => {
  const triage = defineAgent({
    name: 'triage',
    model: new ScriptedModel([
      { toolCalls: [{ name: 'transfer_to_billing', input: {} }] },
      { text: 'Handed over.' },
    ]),
  });
  return defineSwarm({
    name: 'support',
    members: [triage, answering('billing', 1)],
    start: 'triage',
    handoffs: { triage: ['billing'] },
  });
};

/** A graph that forks into two nodes and joins them in a third: three node runs. */
const forkAndJoin = () =>
  defineGraph({
    name: 'fork-join',
    nodes: { left: answering('left', 1), right: answering('right', 1), join: answering('join', 1) },
    start: 'left',
    edges: [
      { from: 'left', to: 'right' },
      { from: 'left', to: 'join' },
      { from: 'right', to: 'join' },
    ],
    finish: ['join'],
  });

async function drain(stream) {
  let count = 0;
  for await (const _event of stream) count += 1;
  await stream.run;
  return count;
}

const mebibytes = (bytes) => bytes / 1024 / 1024;

/** The heap a workflow of `count` parallel invocations holds at its end, and after it is collected. */
async function parallelHeap(count) {
  globalThis.gc?.();
  const before = process.memoryUsage().heapUsed;
  const run = await parallel(count).ask('?', { runtime });
  const atEnd = process.memoryUsage().heapUsed;
  if (run.outcome !== 'completed') throw new Error(`parallel workflow ended ${run.outcome}`);
  globalThis.gc?.();
  const after = process.memoryUsage().heapUsed;
  return { atEnd: mebibytes(atEnd - before), retained: mebibytes(after - before) };
}

/** Measures the assembly layer; print the result with printAssemblyFigures. */
export async function assemblyFigures() {
  const results = [
    await measure('bare agent.ask, one model turn', () => answering('helper', 1).ask('?', { runtime })),
    await measure('workflow of one step (that agent)', () => sequential(1).ask('?', { runtime })),
    await measure(`workflow of ${sequentialSteps} sequential steps`, () =>
      sequential(sequentialSteps).ask('?', { runtime }),
    ),
    await measure('swarm, one handoff (two member turns, three model turns)', () =>
      handingOff().ask('?', { runtime }),
    ),
    await measure('graph, a fork and a join (three node runs)', () => forkAndJoin().ask('?', { runtime })),
    await measure(
      `workflow of ${parallelInvocations} parallel invocations`,
      () => parallel(parallelInvocations).ask('?', { runtime }),
      { runs: 50, warmup: 5 },
    ),
  ];
  const chunks = Array.from({ length: eventsPerAnswer }, () => 'x');
  const streamRuns = { runs: 50, warmup: 5 };
  const streamed = [
    await measure(
      `stream, one step of ${eventsPerAnswer} text parts, without its events`,
      () => drain(sequential(1, chunks).streamAsk('?', { runtime })),
      streamRuns,
    ),
    await measure(
      `stream, one step of ${eventsPerAnswer} text parts, with includeAgentEvents`,
      () => drain(sequential(1, chunks).streamAsk('?', { runtime, includeAgentEvents: true })),
      streamRuns,
    ),
  ];
  const nestedEvents =
    (await drain(sequential(1, chunks).streamAsk('?', { runtime, includeAgentEvents: true }))) -
    (await drain(sequential(1, chunks).streamAsk('?', { runtime })));
  const heap = await parallelHeap(parallelInvocations);
  return { results, streamed, nestedEvents, heap };
}

/** Prints assemblyFigures' table and the derived costs, each beside its target. */
export function printAssemblyFigures({ results, streamed, nestedEvents, heap }) {
  printTable([...results, ...streamed]);
  const [bare, oneStep, manySteps, swarm, graph, parallelRun] = results;
  const micro = (milliseconds) => `${(milliseconds * 1000).toFixed(1)} µs`;
  console.log(
    `a workflow of one step over a bare agent.ask of its agent: ${micro(oneStep.median - bare.median)} (target: under 1 ms); each further step, its agent's run included: ${micro((manySteps.median - oneStep.median) / (sequentialSteps - 1))}, against ${micro(bare.median)} for the bare agent.ask; a swarm member turn: ${micro(swarm.median / 2)}; a graph node run: ${micro(graph.median / 3)}`,
  );
  const [withoutEvents, withEvents] = streamed;
  console.log(
    `each nested event streamed from a step (includeAgentEvents): ${(((withEvents.median - withoutEvents.median) / nestedEvents) * 1000).toFixed(2)} µs (${nestedEvents} events; target: under 20 µs)`,
  );
  console.log(
    `${parallelInvocations} parallel invocations in one workflow: ${parallelRun.median.toFixed(2)} ms, heap ${heap.atEnd.toFixed(2)} MiB at the run's end, ${heap.retained.toFixed(2)} MiB retained after collection${globalThis.gc ? '' : ' (run with --expose-gc for the retained figure)'}`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(`Ghost assemblies on Node ${process.version}, ${new Date().toISOString()}`);
  printAssemblyFigures(await assemblyFigures());
}
