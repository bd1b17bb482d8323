import { defineSwarm } from '@ghost/assemblies';
import { codeMode } from '@ghost/code-mode';
import { defineAgent } from '@ghost/core';
import { countOpenHandles, newOpenHandles, ScriptedModel } from '@ghost/core/testing';
import { describe, expect, it } from 'vitest';
import {
  bwrapDetection,
  bwrapUnavailable,
  codeModeRuntime,
  collectEvents,
  helpCenterLookup,
} from './test-support/code-mode-agent.js';

// A swarm member in code mode: its transfer tools stay the model's own, outside every program's
// catalog (a QuickJS host in bubblewrap runs the program), and a handoff still hands off.
describe('a swarm member in code mode', () => {
  it.skipIf(!bwrapDetection.available)(
    `sees transfer_to_<member> as a model-facing tool, not in the program's catalog, and hands off${bwrapUnavailable}`,
    async () => {
      const handlesBefore = countOpenHandles();
      const runtime = codeModeRuntime();
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
        tools: [helpCenterLookup],
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
        const events = await collectEvents(stream);
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
