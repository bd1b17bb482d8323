import { codeMode } from '@ghost/code-mode';
import { createRuntime, defineAgent, defineTool, type StreamEvent } from '@ghost/core';
import { countOpenHandles, newOpenHandles, ScriptedModel } from '@ghost/core/testing';
import { bwrapSandbox } from '@ghost/sandbox-bwrap';
import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { quickjsEngine } from './quickjs-engine.js';

// Model-directed subagents of an agent in code mode: the control tools stay the model's own,
// outside every program's catalog (a QuickJS host in bubblewrap runs the program).
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

const controls = [
  'spawn_subagent',
  'send_message_to_subagent',
  'interject_subagent',
  'wait_for_subagents',
  'list_subagents',
];

describe('subagents of an agent in code mode', () => {
  it.skipIf(!detection.available)(
    `keeps the subagent controls model-facing and out of the program's catalog${unavailable}`,
    async () => {
      const handlesBefore = countOpenHandles();
      const runtime = createRuntime({ engines: [quickjsEngine], sandboxes: [bwrapSandbox] });
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
        tools: [lookup],
        codeMode: codeMode(),
        subagents: [{ agent: researcher, description: 'Looks things up.' }],
      });
      try {
        const stream = lead.streamAsk('Look it up', { runtime });
        const events = await collect(stream);
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
