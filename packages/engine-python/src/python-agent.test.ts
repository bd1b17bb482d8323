import { codeMode } from '@ghost/code-mode';
import { createRuntime, defineAgent, defineTool } from '@ghost/core';
import { ScriptedModel } from '@ghost/core/testing';
import { bwrapSandbox } from '@ghost/sandbox-bwrap';
import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { pythonEngine } from './python-engine.js';
import { bwrapDetection, bwrapUnavailable } from './test-support/python-session.js';

const orders = defineTool({
  name: 'list_orders',
  description: "Lists a customer's orders.",
  input: Type.Object({ customer: Type.String() }),
  execute: ({ customer }) => [
    { id: 'A1', customer, total: 30 },
    { id: 'A2', customer, total: 45.5 },
    { id: 'A3', customer, total: 12 },
  ],
});

const shipping = defineTool({
  name: 'shipping_status',
  description: 'The shipping status of one order.',
  input: Type.Object({ order_id: Type.String() }),
  execute: ({ order_id }) => ({ order_id, status: order_id === 'A2' ? 'delayed' : 'delivered' }),
});

// One Python program answers a task that needs both tools, several calls of one of them at once.
const program = `import asyncio
found = await tools.list_orders(customer="ada")
statuses = await asyncio.gather(*(tools.shipping_status(order_id=o["id"]) for o in found))
delayed = [s["order_id"] for s in statuses if s["status"] == "delayed"]
print(f"{len(found)} orders, {len(delayed)} delayed")
{"total": sum(o["total"] for o in found), "delayed": delayed}`;

// These run in bubblewrap, the sandbox Python programs get. Where it cannot run (macOS, a kernel
// without user namespaces) the name says why; setup installs it and checks it runs on Linux.
describe.skipIf(!bwrapDetection.available)(
  `an agent with codeMode({ engine: 'python' })${bwrapUnavailable}`,
  () => {
    it('answers a multi-tool task with one Python program in bubblewrap', { timeout: 120_000 }, async () => {
      const runtime = createRuntime({ engines: [pythonEngine], sandboxes: [bwrapSandbox] });
      const model = new ScriptedModel([
        { toolCalls: [{ id: 'exec_1', name: 'exec', input: { source: program } }] },
        { text: 'Ada has 3 orders (87.5 in total); A2 is delayed.' },
      ]);
      const agent = defineAgent({
        name: 'support',
        model,
        tools: [orders, shipping],
        codeMode: codeMode({ engine: 'python', sandbox: 'bwrap' }),
      });
      try {
        const run = await agent.ask('Which of my orders are late, and what did I spend?', { runtime });
        expect(run.outcome).toBe('completed');
        expect(run.sandbox?.name).toBe('bwrap');
        // The model was taught Python, with the tools as async defs.
        const instructions = model.calls[0]?.instructions ?? '';
        expect(instructions).toContain('a fresh CPython interpreter (Pyodide, in WebAssembly)');
        expect(instructions).toContain('async def shipping_status(');
        const execResult = model.calls[1]?.messages.filter((message) => message.role === 'tool').at(-1);
        expect(JSON.parse(String(execResult?.content))).toEqual({
          status: 'completed',
          output: '3 orders, 1 delayed\n',
          value: { total: 87.5, delayed: ['A2'] },
        });
      } finally {
        await runtime.close();
      }
    });
  },
);
