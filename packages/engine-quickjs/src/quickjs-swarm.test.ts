import { defineSwarm } from '@ghost/assemblies';
import { codeMode } from '@ghost/code-mode';
import { createRuntime, defineAgent, defineTool, type StreamEvent } from '@ghost/core';
import { countOpenHandles, newOpenHandles, ScriptedModel } from '@ghost/core/testing';
import { bwrapSandbox } from '@ghost/sandbox-bwrap';
import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { quickjsEngine } from './quickjs-engine.js';

// A swarm member in code mode: its transfer tools stay the model's own, outside every program's
// catalog (a QuickJS host in bubblewrap runs the program), and a handoff still hands off.
const detection = await bwrapSandbox.detect();
const unavailable = detection.available
  ? ''
  : ` (skipped: bubblewrap is not usable here: ${detection.reason})`;

const lookup = defineTool({
  name: 'help_center_lookup',
  description: 'Returns the help-center entry for a topic.',
  input: Type.Object({ topic: Type.String() }),
  execute: ({ topic }) => ({ topic, text: `All about ${topic}.` }),
});

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe('a swarm member in code mode', () => {
  it.skipIf(!detection.available)(
    `sees transfer_to_<member> as a model-facing tool, not in the program's catalog, and hands off${unavailable}`,
    async () => {
      const handlesBefore = countOpenHandles();
      const runtime = createRuntime({ engines: [quickjsEngine], sandboxes: [bwrapSandbox] });
      const program = [
        "const names = ['transfer_to_billing', 'help_center_lookup'];",
        'text(names.map((name) => name + ":" + (name in tools)).join(","))',
      ].join('\n');
      const triageModel = new ScriptedModel([
        { toolCalls: [{ id: 'exec_1', name: 'exec', input: { source: program } }] },
        { toolCalls: [{ name: 'transfer_to_billing', input: { reason: 'refund' } }] },
        { text: 'Passing you to billing.' },
      ]);
      const triage = defineAgent({
        name: 'triage',
        model: triageModel,
        tools: [lookup],
        codeMode: codeMode(),
      });
      const billingModel = new ScriptedModel([{ text: 'Refunded.' }]);
      const billing = defineAgent({ name: 'billing', model: billingModel });
      const swarm = defineSwarm({
        name: 'support',
        members: [triage, billing],
        start: 'triage',
        handoffs: { triage: ['billing'] },
      });
      try {
        const stream = swarm.streamAsk('I was charged twice.', { runtime });
        const events = await collect(stream);
        const run = await stream.run;
        expect(run.outcome).toBe('completed');
        expect(run.response).toBe('Refunded.');
        // The model sees code mode's controls and the transfer tool, not the brokered tool.
        const modelTools = triageModel.calls[0]?.tools.map((tool) => tool.name) ?? [];
        expect(modelTools).toEqual(expect.arrayContaining(['exec', 'wait', 'stop', 'transfer_to_billing']));
        expect(modelTools).not.toContain('help_center_lookup');
        // The program's catalog has the brokered tool and not the transfer tool.
        expect(triageModel.calls[0]?.instructions).not.toContain('transfer_to_billing');
        expect(triageModel.calls[0]?.instructions).toContain('help_center_lookup');
        const execResult = triageModel.calls[1]?.messages.at(-1);
        const observed = JSON.parse(execResult?.role === 'tool' ? execResult.content : '{}');
        expect(observed.output.trim()).toBe('transfer_to_billing:false,help_center_lookup:true');
        // The handoff reached billing, with the conversation so far.
        const transitions = events.flatMap((event) =>
          event.type === 'assembly_transition' ? [event.data] : [],
        );
        expect(transitions).toEqual([
          { assemblyName: 'support', from: 'triage', to: 'billing', kind: 'handoff' },
        ]);
        expect(billingModel.calls[0]?.messages.map((message) => message.content)).toEqual([
          'I was charged twice.',
          'Passing you to billing.',
          expect.stringContaining('Reason: refund'),
        ]);
      } finally {
        await runtime.close();
      }
      expect(await newOpenHandles(handlesBefore)).toEqual([]);
    },
  );
});
