import { codeMode } from '@ghost/code-mode';
import { defineAgent, type StreamEventOf } from '@ghost/core';
import { countOpenHandles, MockModel, newOpenHandles, ScriptedModel } from '@ghost/core/testing';
import { describe, expect, it } from 'vitest';
import {
  bwrapDetection,
  bwrapUnavailable,
  codeModeRuntime,
  collectEvents,
  helpCenterLookup,
} from './test-support/code-mode-agent.js';

// Agents run as tools (agent.asTool()) called from code-mode programs: QuickJS hosts in
// bubblewrap, the outer agent's program and the nested agent's own.
type AgentStreamEvent = StreamEventOf<'agent_stream'>;

describe('an agent run as a tool, called from a code-mode program', () => {
  it.skipIf(!bwrapDetection.available)(
    `answers the program, in parallel, with the nested agent's own program in its own sandbox${bwrapUnavailable}`,
    async () => {
      const handlesBefore = countOpenHandles();
      const runtime = codeModeRuntime();
      // The researcher works in code mode too: its program looks the topic up.
      const researcher = defineAgent({
        name: 'researcher',
        tools: [helpCenterLookup],
        codeMode: codeMode(),
        model: new MockModel({
          stream: (request, _options) => {
            const last = request.messages.at(-1);
            if (last?.role === 'user') {
              const source = `text((await tools.help_center_lookup({ topic: ${JSON.stringify(last.content)} })).text)`;
              return [
                { type: 'tool-call-start', index: 0, id: `exec_${last.content}`, name: 'exec' },
                { type: 'tool-call-delta', index: 0, argumentsDelta: JSON.stringify({ source }) },
                { type: 'tool-call-stop', index: 0 },
                { type: 'finish', reason: 'tool-calls' },
              ];
            }
            const output =
              last?.role === 'tool' ? (JSON.parse(last.content) as { output: string }).output : '';
            return [
              { type: 'text-delta', text: `Found: ${output.trim()}` },
              { type: 'finish', reason: 'stop' },
            ];
          },
        }),
      });
      const program = [
        'const [refunds, shipping] = await Promise.all([',
        "  tools.researcher({ input: 'refunds' }),",
        "  tools.researcher({ input: 'shipping' }),",
        ']);',
        'text(refunds + " | " + shipping)',
      ].join('\n');
      const supportModel = new ScriptedModel([
        { toolCalls: [{ id: 'exec_1', name: 'exec', input: { source: program } }] },
        { text: 'Both found.' },
      ]);
      const support = defineAgent({
        name: 'support',
        model: supportModel,
        tools: [researcher.asTool()],
        codeMode: codeMode(),
      });
      try {
        const stream = support.streamAsk('Refunds and shipping?', { runtime, includeAgentEvents: true });
        const events = await collectEvents(stream);
        const run = await stream.run;
        expect(run.outcome).toBe('completed');
        expect(run.sandbox?.name).toBe('bwrap');

        // The program got both answers, in the order it asked.
        const execResult = supportModel.calls[1]?.messages.at(-1);
        const observed = JSON.parse(execResult?.role === 'tool' ? execResult.content : '{}');
        expect(observed.status).toBe('completed');
        expect(observed.output.trim()).toBe('Found: All about refunds. | Found: All about shipping.');
        // The program's calls show by name under its exec, as every brokered call does.
        const brokered = events.filter(
          (event): event is StreamEventOf<'tool_start'> =>
            event.type === 'tool_start' && event.data.toolName === 'researcher',
        );
        expect(brokered.map((event) => event.data.parentToolCallId)).toEqual(['exec_1', 'exec_1']);
        // Each nested agent's events come from the program's call that ran it.
        const nested = events.filter((event): event is AgentStreamEvent => event.type === 'agent_stream');
        const invocations = new Set(nested.map((event) => event.data.source.invocationId));
        expect(invocations.size).toBe(2);
        const callIds = new Set(brokered.map((event) => event.data.toolCallId));
        for (const event of nested) {
          expect(event.data.source.depth).toBe(1);
          expect(callIds.has(event.data.source.path[0]?.replace(/^tool:/, '') ?? '')).toBe(true);
        }
        // The nested agent's own program, with its own brokered call, shows in its events.
        const innerTools = nested
          .filter((event) => event.data.event.type === 'tool_start')
          .map((event) => event.data.event.type === 'tool_start' && event.data.event.data.toolName);
        expect(innerTools).toEqual(['help_center_lookup', 'help_center_lookup']);
        const programStarts = nested.filter((event) => event.data.event.type === 'program_start');
        expect(programStarts).toHaveLength(2);
      } finally {
        await runtime.close();
      }
      expect(await newOpenHandles(handlesBefore)).toEqual([]);
    },
  );

  it.skipIf(!bwrapDetection.available)(
    `stops the program and the nested agent when the run is cancelled, leaving nothing running${bwrapUnavailable}`,
    async () => {
      const handlesBefore = countOpenHandles();
      const runtime = codeModeRuntime();
      let innerStarted: () => void = () => {};
      const started = new Promise<void>((resolve) => {
        innerStarted = resolve;
      });
      let innerSignal: AbortSignal | undefined;
      const researcher = defineAgent({
        name: 'researcher',
        model: new MockModel({
          stream: async function* (_request, options) {
            innerSignal = options.signal;
            innerStarted();
            await new Promise((_resolve, reject) => {
              options.signal.addEventListener('abort', () => reject(options.signal.reason), { once: true });
            });
            yield { type: 'finish', reason: 'stop' };
          },
        }),
      });
      const support = defineAgent({
        name: 'support',
        model: new ScriptedModel([
          {
            toolCalls: [
              {
                id: 'exec_1',
                name: 'exec',
                input: { source: "text(await tools.researcher({ input: 'dig' }))" },
              },
            ],
          },
        ]),
        tools: [researcher.asTool()],
        codeMode: codeMode(),
      });
      const controller = new AbortController();
      void started.then(() => controller.abort());
      try {
        const stream = support.streamAsk('go', {
          runtime,
          signal: controller.signal,
          includeAgentEvents: true,
        });
        const events = await collectEvents(stream);
        const run = await stream.run;
        expect(run.outcome).toBe('cancelled');
        expect(innerSignal?.aborted).toBe(true);
        const innerEnd = events
          .filter((event): event is AgentStreamEvent => event.type === 'agent_stream')
          .at(-1);
        expect(innerEnd?.data.event.type).toBe('invocation_error');
        expect(events.at(-1)?.type).toBe('run_cancel');
      } finally {
        await runtime.close();
      }
      expect(await newOpenHandles(handlesBefore)).toEqual([]);
    },
  );
});
