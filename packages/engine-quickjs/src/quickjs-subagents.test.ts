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

// Model-directed subagents of an agent in code mode: the control tools stay the model's own,
// outside every program's catalog (a QuickJS host in bubblewrap runs the program).
const controls = [
  'spawn_subagent',
  'send_message_to_subagent',
  'interject_subagent',
  'wait_for_subagents',
  'list_subagents',
];

describe('subagents of an agent in code mode', () => {
  it.skipIf(!bwrapDetection.available)(
    `keeps the subagent controls model-facing and out of the program's catalog${bwrapUnavailable}`,
    async () => {
      const handlesBefore = countOpenHandles();
      const runtime = codeModeRuntime();
      const researcher = defineAgent({
        name: 'researcher',
        model: new ScriptedModel([{ text: 'Found it.' }]),
      });
      const program = [
        "const names = ['spawn_subagent', 'wait_for_subagents', 'list_subagents', 'help_center_lookup'];",
        'text(names.map((name) => name + ":" + (name in tools)).join(","))',
      ].join('\n');
      const model = new ScriptedModel([
        { toolCalls: [{ id: 'exec_1', name: 'exec', input: { source: program } }] },
        {
          toolCalls: [
            {
              name: 'spawn_subagent',
              input: { kind: 'researcher', task_name: 'look', task: 'Look it up.', mode: 'sync' },
            },
          ],
        },
        { text: 'Done.' },
      ]);
      const lead = defineAgent({
        name: 'lead',
        model,
        tools: [helpCenterLookup],
        codeMode: codeMode(),
        subagents: [{ agent: researcher, description: 'Looks things up.' }],
      });
      try {
        const stream = lead.streamAsk('Look it up', { runtime });
        const events = await collectEvents(stream);
        const run = await stream.run;
        expect(run.outcome).toBe('completed');
        // The model sees code mode's controls and the subagent controls, not the brokered tool.
        const modelTools = model.calls[0]?.tools.map((tool) => tool.name) ?? [];
        expect(modelTools).toEqual(expect.arrayContaining(['exec', 'wait', 'stop', ...controls]));
        expect(modelTools).not.toContain('help_center_lookup');
        // The program's catalog (its declarations, and its `tools` object) has none of them.
        for (const name of controls) expect(model.calls[0]?.instructions).not.toContain(name);
        expect(model.calls[0]?.instructions).toContain('help_center_lookup');
        const execResult = model.calls[1]?.messages.at(-1);
        const observed = JSON.parse(execResult?.role === 'tool' ? execResult.content : '{}');
        expect(observed.output.trim()).toBe(
          'spawn_subagent:false,wait_for_subagents:false,list_subagents:false,help_center_lookup:true',
        );
        // The model spawned the subagent itself, and read its answer.
        const spawned = model.calls[2]?.messages.at(-1);
        expect(JSON.parse(spawned?.role === 'tool' ? spawned.content : '{}')).toMatchObject({
          subagent_id: 'look',
          status: 'idle',
          response: 'Found it.',
        });
        const phases = events.flatMap((event) => (event.type === 'subagent' ? [event.data.phase] : []));
        expect(phases).toEqual(['spawned', 'turn_started', 'turn_finished']);
      } finally {
        await runtime.close();
      }
      expect(await newOpenHandles(handlesBefore)).toEqual([]);
    },
  );
});
