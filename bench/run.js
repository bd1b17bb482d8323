// `pnpm bench`: figures for @ghost/core from its built output, as a user would run it.
// Code-mode figures come from code-mode.js, the bubblewrap sandbox's from sandbox.js, the
// engines side by side from engines.js, and code mode against direct tool calls through a real
// provider from model-turns.js, cold start (fresh Node processes: imports, session open, first
// result) from cold-start.js, a fresh host's CPU and round trip from host-cpu.js, memory with
// 1 to 200 concurrent sessions from sessions.js, what a conversation's turn costs in each session
// store from session-stores.js, agents run as tools from nested-agents.js, Workflows, Swarms
// and Graphs from assemblies.js, the tool round trip beside its floor (a bare ping-pong between
// two processes) from round-trip-floor.js and stage by stage from round-trip-stages.js, and what
// importing Ghost loads from import-breakdown.js (beside the peers: peers.js).
import { createRuntime, defineAgent, defineTool } from '@ghost/core';
import { ScriptedModel } from '@ghost/core/testing';
import Type from 'typebox';
import { assemblyFigures, printAssemblyFigures } from './assemblies.js';
import { codeModeFigures } from './code-mode.js';
import { coldStartFigures } from './cold-start.js';
import { engineFigures } from './engines.js';
import { hostCostFigures, roundTripComparison } from './host-cpu.js';
import { formatImportBreakdown, importBreakdownFigures } from './import-breakdown.js';
import { measure, printTable } from './measure.js';
import { modelTurnFigures, printModelTurnFigures } from './model-turns.js';
import { nestedAgentFigures, printNestedAgentFigures } from './nested-agents.js';
import { formatRoundTripFloor, roundTripFloorFigures } from './round-trip-floor.js';
import { roundTripStageFigures } from './round-trip-stages.js';
import { formatRoundTripWarmup, roundTripWarmupFigures } from './round-trip-warmup.js';
import { sandboxFigures } from './sandbox.js';
import { printSessionStoreFigures, sessionStoreFigures } from './session-stores.js';
import { printSessionFigures, sessionFigures } from './sessions.js';

const runtime = createRuntime();
const noop = defineTool({
  name: 'noop',
  description: 'Does nothing.',
  input: Type.Object({}),
  execute: () => null,
});

function agentWith(steps) {
  return defineAgent({ name: 'bench', model: new ScriptedModel(steps), tools: [noop] });
}

const results = [
  await measure('run, one model turn, no tools', () => agentWith([{ text: 'hi' }]).ask('?', { runtime })),
  await measure('run, one direct tool call', () =>
    agentWith([{ toolCalls: [{ name: 'noop', input: {} }] }, { text: 'done' }]).ask('?', { runtime }),
  ),
  await measure('run, 64 tool calls in one turn', () =>
    agentWith([
      { toolCalls: Array.from({ length: 64 }, () => ({ name: 'noop', input: {} })) },
      { text: 'done' },
    ]).ask('?', { runtime }),
  ),
];
const codeMode = await codeModeFigures();
const sandbox = await sandboxFigures();
const engines = await engineFigures();
const modelTurns = await modelTurnFigures();
const coldStart = await coldStartFigures();
const hostCost = await hostCostFigures(30, ['engine']);
const sessions = sandbox.unavailable === undefined ? await sessionFigures() : undefined;
const roundTripFloor = await roundTripFloorFigures({ ghost: sandbox.unavailable === undefined });
const roundTripStages = await roundTripStageFigures();
const roundTripWarmup = sandbox.unavailable === undefined ? await roundTripWarmupFigures() : [];
const imports = await importBreakdownFigures();
const sessionStores = await sessionStoreFigures();
const nestedAgents = await nestedAgentFigures();
const assemblies = await assemblyFigures();
console.log(`Ghost on Node ${process.version}, ${new Date().toISOString()}`);
printTable([
  ...results,
  ...codeMode.results,
  ...(sandbox.results ?? []),
  ...engines.results,
  ...coldStart.results,
  ...hostCost.trips,
]);
for (const row of hostCost.cpu)
  console.log(`${row.name}: ${row.hostCpuMs.toFixed(1)} ms (${row.programs} programs)`);
for (const line of roundTripComparison(hostCost.trips)) console.log(line);
for (const line of coldStart.modules) console.log(`modules loaded by ${line}`);
for (const line of formatRoundTripFloor(roundTripFloor)) console.log(line);
for (const row of roundTripStages)
  console.log(`round trip stage, ${row.name}: ${row.median.toFixed(2)} µs per call`);
for (const line of formatRoundTripWarmup(roundTripWarmup)) console.log(line);
for (const line of formatImportBreakdown(imports)) console.log(line);
console.log(
  `code mode: ${codeMode.throughput.toFixed(1)} programs/s with 4 concurrent sessions (process placement)`,
);
console.log(
  `code mode: ${codeMode.threadThroughput.toFixed(1)} programs/s with 4 concurrent sessions (thread placement)`,
);
console.log(
  `code mode: engine host resident memory ${codeMode.resident.map((size) => `${size.toFixed(1)} MiB`).join(', ')} (running host and spare)`,
);
console.log(
  sandbox.unavailable === undefined
    ? `code mode in bwrap: ${sandbox.throughput.toFixed(1)} programs/s with 4 concurrent sessions (process placement), ${sandbox.sessionThroughput.toFixed(1)} (session placement)`
    : `bwrap figures skipped: ${sandbox.unavailable}`,
);
printModelTurnFigures(modelTurns);
if (sessions) printSessionFigures(sessions);
printSessionStoreFigures(sessionStores);
printNestedAgentFigures(nestedAgents);
printAssemblyFigures(assemblies);
console.log(`heap used after the runs: ${(process.memoryUsage().heapUsed / 1024 / 1024).toFixed(1)} MiB`);
