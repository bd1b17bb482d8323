// `pnpm bench`: figures for @ghost/core from its built output, as a user would run it.
// Code-mode engines and sandboxes add their measurements here as they land.
import { createRuntime, defineAgent, defineTool } from '@ghost/core';
import { ScriptedModel } from '@ghost/core/testing';
import Type from 'typebox';
import { measure, printTable } from './measure.js';

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
console.log(`@ghost/core on Node ${process.version}, ${new Date().toISOString()}`);
printTable(results);
console.log(`heap used after the runs: ${(process.memoryUsage().heapUsed / 1024 / 1024).toFixed(1)} MiB`);
