import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineGraph, defineSwarm, defineWorkflow } from '@ghost/assemblies';
import { codeMode } from '@ghost/code-mode';
import { descendantProcesses } from '@ghost/code-mode/testing';
import { defineAgent, defineTool, type Runtime, type StreamEvent } from '@ghost/core';
import type { AgentStreamSource, NestedStreamEvent } from '@ghost/core/plugin';
import { ScriptedModel } from '@ghost/core/testing';
import Type from 'typebox';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  bwrapDetection,
  bwrapUnavailable,
  codeModeRuntime,
  collectEvents,
  helpCenterLookup,
} from './test-support/code-mode-agent.js';

// Assemblies (Workflow, Swarm, Graph) whose steps are agents in code mode, end to end: a QuickJS
// host in bubblewrap runs every program, and what the user sees (outcome, events, usage, what
// is left behind) is what is checked.
const usage = { inputTokens: 10, outputTokens: 5 };

/** A tool that never answers: it waits until its call is aborted. */
const block = defineTool({
  name: 'block',
  description: 'Waits until the call is cancelled.',
  input: Type.Object({ label: Type.String() }),
  execute: (_input, { signal }) =>
    new Promise<never>((_resolve, reject) => {
      if (signal.aborted) reject(signal.reason);
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    }),
});

function exec(source: string, id = 'exec_1') {
  return { toolCalls: [{ id, name: 'exec', input: { source } }], usage };
}

interface Nested {
  readonly source: AgentStreamSource;
  readonly event: NestedStreamEvent;
}

function nestedEvents(events: readonly StreamEvent[]): Nested[] {
  return events.flatMap((event) => (event.type === 'agent_stream' ? [event.data] : []));
}

/** Every nested `invocation_start` with no `invocation_stop` or `invocation_error` of the same id. */
function unmatchedInvocations(events: readonly StreamEvent[]): string[] {
  const open = new Map<string, string>();
  for (const { source, event } of nestedEvents(events)) {
    if (event.type === 'invocation_start') open.set(event.data.invocationId, source.path.join('/'));
    if (event.type === 'invocation_stop' || event.type === 'invocation_error') {
      open.delete(event.data.invocationId);
    }
  }
  return [...open.values()];
}

function lastUserText(model: ScriptedModel, call = 0): string {
  const message = model.calls[call]?.messages.at(-1);
  return typeof message?.content === 'string' ? message.content : '';
}

// Each case starts several sandboxed hosts, which takes far longer on a loaded machine.
describe('assemblies of agents in code mode (QuickJS in bubblewrap)', { timeout: 90_000 }, () => {
  let workspaceRoot: string;
  let runtime: Runtime;

  beforeEach(async () => {
    // The run's program workspaces are made here, so what it leaves behind can be listed.
    workspaceRoot = await mkdtemp(join(tmpdir(), 'ghost-assemblies-e2e-'));
    runtime = codeModeRuntime({ workspaceRoot });
  });

  afterEach(async () => {
    await runtime.close();
    await rm(workspaceRoot, { recursive: true, force: true });
  });

  it.skipIf(!bwrapDetection.available)(
    `cancelling a workflow mid-parallel stops every program and subagent, and leaves no process or workspace${bwrapUnavailable}`,
    async () => {
      const worker = (name: string) =>
        defineAgent({
          name,
          model: new ScriptedModel([exec(`await tools.block({ label: '${name}' })`), { text: 'never' }]),
          tools: [block],
          codeMode: codeMode(),
        });
      // The subagent's own turn blocks in a program of its own.
      const helper = defineAgent({
        name: 'helper',
        model: new ScriptedModel([exec("await tools.block({ label: 'helper' })"), { text: 'never' }]),
        tools: [block],
        codeMode: codeMode(),
      });
      const lead = defineAgent({
        name: 'lead',
        model: new ScriptedModel([
          {
            toolCalls: [
              {
                name: 'spawn_subagent',
                input: { kind: 'helper', task_name: 'dig', task: 'Dig.', mode: 'async' },
              },
            ],
            usage,
          },
          { toolCalls: [{ name: 'wait_for_subagents', input: {} }], usage },
          { text: 'never' },
        ]),
        tools: [helpCenterLookup],
        codeMode: codeMode(),
        subagents: [{ agent: helper, description: 'Digs.' }],
      });
      const workflow = defineWorkflow({
        name: 'fan-out',
        perform: async (ctx, input) => {
          const results = await ctx.parallel([
            ctx.invoke(worker('worker_a'), input),
            ctx.invoke(worker('worker_b'), input),
            ctx.invoke(worker('worker_c'), input),
            ctx.invoke(lead, input),
          ]);
          return results.map((result) => result.response).join('\n');
        },
      });

      const controller = new AbortController();
      const stream = workflow.streamAsk('Go.', {
        runtime,
        signal: controller.signal,
        includeAgentEvents: true,
      });
      const events: StreamEvent[] = [];
      const blocked = new Set<string>(); // agents whose program is inside `block`
      let subagentTurnStarted = false;
      let aliveAtCancel: { pid: number; command: string }[] = [];
      let workspacesAtCancel: string[] = [];
      for await (const event of stream) {
        events.push(event);
        if (event.type === 'agent_stream') {
          const { source, event: nested } = event.data;
          if (nested.type === 'tool_start' && nested.data.toolName === 'block') blocked.add(source.agentName);
          if (nested.type === 'subagent' && nested.data.phase === 'turn_started') subagentTurnStarted = true;
        }
        if (event.type === 'subagent' && event.data.phase === 'turn_started') subagentTurnStarted = true;
        if (!controller.signal.aborted && blocked.size === 4 && subagentTurnStarted) {
          // What the cancellation has to clean up: the four programs' hosts and their workspaces.
          aliveAtCancel = await descendantProcesses();
          workspacesAtCancel = await readdir(workspaceRoot);
          controller.abort();
        }
      }
      const run = await stream.run;

      expect(controller.signal.aborted).toBe(true);
      expect(run.outcome).toBe('cancelled');
      expect(events.at(-1)?.type).toBe('run_cancel');
      // Every program had started, in the four agents that run one (the lead runs none).
      const programStarts = nestedEvents(events).filter(({ event }) => event.type === 'program_start');
      expect(programStarts.map(({ source }) => source.agentName).sort()).toEqual([
        'helper',
        'worker_a',
        'worker_b',
        'worker_c',
      ]);
      // The subagent's events come from under its parent, placed under `subagent:dig`.
      const helperStart = programStarts.find(({ source }) => source.agentName === 'helper');
      expect(helperStart?.source.path).toEqual([
        'step:lead',
        'lead',
        expect.any(String),
        'subagent:dig',
        'helper',
        helperStart?.source.invocationId,
      ]);
      // No program completed: each one cut short by the cancellation has its program_stop,
      // 'terminated', so a UI showing a running program can close it.
      const programStops = nestedEvents(events).flatMap(({ event }) =>
        event.type === 'program_stop' ? [event.data] : [],
      );
      expect(programStops).toHaveLength(4);
      for (const stop of programStops) {
        expect(stop).toMatchObject({
          status: 'terminated',
          error: expect.stringContaining('The program was stopped'),
        });
      }
      // Every invocation that started ended, each as cancelled.
      const invocationStarts = nestedEvents(events).filter(({ event }) => event.type === 'invocation_start');
      expect(invocationStarts.map(({ source }) => source.agentName).sort()).toEqual([
        'helper',
        'lead',
        'worker_a',
        'worker_b',
        'worker_c',
      ]);
      expect(unmatchedInvocations(events)).toEqual([]);
      const invocationErrors = nestedEvents(events).flatMap(({ event }) =>
        event.type === 'invocation_error' ? [event.data.outcome] : [],
      );
      expect(invocationErrors).toEqual(Array(5).fill('cancelled'));
      const phases = nestedEvents(events).flatMap(({ event }) =>
        event.type === 'subagent' ? [event.data.phase] : [],
      );
      expect(phases).toEqual(['spawned', 'turn_started', expect.stringMatching(/^(cancelled|turn_failed)$/)]);
      expect(aliveAtCancel.length).toBeGreaterThanOrEqual(4);
      expect(workspacesAtCancel.length).toBeGreaterThanOrEqual(4);
      // Nothing is left: no host process, no program workspace (a cleanup check, so it polls).
      await expect.poll(descendantProcesses, { timeout: 10_000, interval: 100 }).toEqual([]);
      await expect.poll(() => readdir(workspaceRoot), { timeout: 10_000, interval: 100 }).toEqual([]);
    },
  );

  it.skipIf(!bwrapDetection.available)(
    `a swarm member in code mode with subagents keeps spawn_subagent and transfer_to_<member> model-facing, spawns, then hands off${bwrapUnavailable}`,
    async () => {
      const researcherModel = new ScriptedModel([{ text: 'Found it.', usage }]);
      const researcher = defineAgent({ name: 'researcher', model: researcherModel });
      const program = [
        "const names = ['exec', 'spawn_subagent', 'wait_for_subagents', 'transfer_to_billing', 'help_center_lookup'];",
        "const present = names.filter((name) => name in tools).join(',');",
        'const leaked = Object.keys(tools).filter((name) => /^(spawn_subagent|transfer_to_)/.test(name));',
        "text(present + '|' + leaked.join(','))",
      ].join('\n');
      const triageModel = new ScriptedModel([
        exec(program),
        {
          toolCalls: [
            {
              name: 'spawn_subagent',
              input: { kind: 'researcher', task_name: 'look', task: 'Look it up.', mode: 'sync' },
            },
          ],
          usage,
        },
        { toolCalls: [{ name: 'transfer_to_billing', input: { reason: 'refund' } }], usage },
        { text: 'Passing you to billing.', usage },
      ]);
      const triage = defineAgent({
        name: 'triage',
        model: triageModel,
        tools: [helpCenterLookup],
        codeMode: codeMode(),
        subagents: [{ agent: researcher, description: 'Looks things up.' }],
      });
      const billingModel = new ScriptedModel([{ text: 'Refunded.', usage }]);
      const billing = defineAgent({ name: 'billing', model: billingModel });
      const swarm = defineSwarm({
        name: 'support',
        members: [triage, billing],
        start: 'triage',
        handoffs: { triage: ['billing'] },
      });

      const stream = swarm.streamAsk('I was charged twice.', { runtime, includeAgentEvents: true });
      const events = await collectEvents(stream);
      const run = await stream.run;
      expect(run.outcome).toBe('completed');
      expect(run.response).toBe('Refunded.');

      // The model sees exec, the subagent controls and the transfer tool, not the brokered tool.
      const modelTools = triageModel.calls[0]?.tools.map((tool) => tool.name) ?? [];
      expect(modelTools).toEqual(
        expect.arrayContaining([
          'exec',
          'wait',
          'stop',
          'spawn_subagent',
          'wait_for_subagents',
          'transfer_to_billing',
        ]),
      );
      expect(modelTools).not.toContain('help_center_lookup');
      // The program's catalog (its declarations and its `tools` object) has only the brokered tool.
      const instructions = triageModel.calls[0]?.instructions ?? '';
      expect(instructions).toContain('help_center_lookup');
      expect(instructions).not.toContain('spawn_subagent');
      expect(instructions).not.toContain('transfer_to_billing');
      const execResult = triageModel.calls[1]?.messages.at(-1);
      const observed = JSON.parse(execResult?.role === 'tool' ? execResult.content : '{}');
      expect(observed.output.trim()).toBe('help_center_lookup|');

      // The member spawned the subagent itself and read its answer, then handed off.
      const spawned = triageModel.calls[2]?.messages.at(-1);
      expect(JSON.parse(spawned?.role === 'tool' ? spawned.content : '{}')).toMatchObject({
        subagent_id: 'look',
        status: 'idle',
        response: 'Found it.',
      });
      const phases = nestedEvents(events).flatMap(({ event }) =>
        event.type === 'subagent' ? [event.data.phase] : [],
      );
      expect(phases).toEqual(['spawned', 'turn_started', 'turn_finished']);
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
      expect(unmatchedInvocations(events)).toEqual([]);

      // Usage is summed over the member's four turns, its subagent's one and billing's one.
      expect(triageModel.calls).toHaveLength(4);
      expect(researcherModel.calls).toHaveLength(1);
      expect(billingModel.calls).toHaveLength(1);
      expect(run.usage.inputTokens).toBe(60);
      expect(run.usage.outputTokens).toBe(30);
    },
  );

  it.skipIf(!bwrapDetection.available)(
    `a graph forks into two code-mode branches and joins them, each branch's events in order under its own path${bwrapUnavailable}`,
    async () => {
      const planner = defineAgent({ name: 'planner', model: new ScriptedModel([{ text: 'Lisbon', usage }]) });
      const branch = (name: string, fact: string) =>
        defineAgent({
          name,
          model: new ScriptedModel([exec(`text('${fact}')`), { text: `${name}: ${fact}`, usage }]),
          codeMode: codeMode(),
        });
      const writerModel = new ScriptedModel([{ text: 'article', usage }]);
      const writer = defineAgent({ name: 'writer', model: writerModel });
      const graph = defineGraph({
        name: 'fork-join',
        nodes: {
          plan: planner,
          left: branch('facts', 'F1'),
          right: branch('quotes', 'Q1'),
          write: writer,
        },
        start: 'plan',
        edges: [
          { from: 'plan', to: 'left' },
          { from: 'plan', to: 'right' },
          { from: 'left', to: 'write' },
          { from: 'right', to: 'write' },
        ],
      });

      const stream = graph.streamAsk('Lisbon', { runtime, includeAgentEvents: true });
      const events = await collectEvents(stream);
      const run = await stream.run;
      expect(run.outcome).toBe('completed');
      expect(run.response).toBe('article');
      expect(run.usage.inputTokens).toBe(60); // planner 1, each branch 2, writer 1

      const fork = events.find((event) => event.type === 'assembly_fork');
      expect(fork?.data).toEqual({ assemblyName: 'fork-join', from: 'plan', to: ['left', 'right'] });
      const joined = events.find((event) => event.type === 'assembly_join');
      expect(joined?.data).toMatchObject({ assemblyName: 'fork-join', node: 'write' });

      const milestones = new Set(['invocation_start', 'program_start', 'program_stop', 'invocation_stop']);
      for (const [node, agentName, fact] of [
        ['left', 'facts', 'F1'],
        ['right', 'quotes', 'Q1'],
      ] as const) {
        const own = nestedEvents(events).filter(({ source }) => source.agentName === agentName);
        const invocationIds = new Set(own.map(({ source }) => source.invocationId));
        expect(invocationIds.size).toBe(1);
        const [invocationId] = invocationIds;
        for (const { source } of own) {
          expect(source.path).toEqual([`step:${node}`, agentName, invocationId]);
          expect(source.depth).toBe(1);
        }
        // The branch's own events, in order: it started, ran its program, and answered.
        const sequence = own.filter(({ event }) => milestones.has(event.type));
        expect(sequence.map(({ event }) => event.type)).toEqual([
          'invocation_start',
          'program_start',
          'program_stop',
          'invocation_stop',
        ]);
        const [start, , stop, end] = sequence.map(({ event }) => event);
        expect(start?.type === 'invocation_start' && start.data.invocationId).toBe(invocationId);
        expect(stop?.type === 'program_stop' && stop.data).toMatchObject({ status: 'completed' });
        expect(stop?.type === 'program_stop' && stop.data.output.trim()).toBe(fact);
        expect(end?.type === 'invocation_stop' && end.data).toEqual({
          invocationId,
          response: `${agentName}: ${fact}`,
        });
      }

      // The join got both branches, each as a labelled section.
      expect(writerModel.calls).toHaveLength(1);
      const joinInput = lastUserText(writerModel);
      expect(joinInput).toContain('## left');
      expect(joinInput).toContain('facts: F1');
      expect(joinInput).toContain('## right');
      expect(joinInput).toContain('quotes: Q1');
      expect(unmatchedInvocations(events)).toEqual([]);
    },
  );
});
