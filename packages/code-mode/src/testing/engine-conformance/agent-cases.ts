import {
  createRuntime,
  defineAgent,
  defineTool,
  type Runtime,
  type StreamEvent,
  type Tool,
} from '@ghost/core';
import { ScriptedModel } from '@ghost/core/testing';
import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { codeMode } from '../../code-mode.js';
import type { ProgramResult } from '../../engine.js';
import { descendantProcesses } from '../child-processes.js';
import { type CasePrograms, inLanguage, itWithPrograms } from './case-programs.js';
import type { ConformanceContext } from './conformance-context.js';
import { delay, foreverTool, lastToolContent } from './conformance-fixtures.js';

/** What the agent cases share: a runtime with the engine, a lookup tool and a program that calls it twice. */
interface AgentFixtures {
  readonly runtime: () => Runtime;
  readonly lookup: Tool;
  readonly programs: CasePrograms<string>;
}

/**
 * The conformance cases for the engine in an agent: the run, its stream events and its tool-call budget.
 * Registers them under the current `describe`; `describeEngineConformance` runs it with the others.
 */
export function describeAgentCases(context: ConformanceContext): void {
  const { engine } = context;
  describe('in an agent', () => {
    const runtime = () => createRuntime({ engines: [engine] });
    const lookup = defineTool({
      name: 'help_center_lookup',
      description: 'Find a support answer by topic.',
      input: Type.Object({ query: Type.String() }),
      execute: ({ query }) =>
        ({ 'refund policy': 'Refunds within 30 days.', 'shipping policy': 'Ships in 3 to 5 days.' })[query] ??
        'No matching entry.',
    });
    const programs = {
      javascript: `const [refund, shipping] = await Promise.all([
tools.help_center_lookup({ query: 'refund policy' }),
tools.help_center_lookup({ query: 'shipping policy' }),
]);
text(refund + '\\n' + shipping);`,
      python: `import asyncio

refund, shipping = await asyncio.gather(
    tools.help_center_lookup(query="refund policy"),
    tools.help_center_lookup(query="shipping policy"),
)
text(refund + "\\n" + shipping)`,
    };
    const fixtures: AgentFixtures = { runtime, lookup, programs };

    describeModelFacingCases(context, fixtures);
    describeBrokeredCallCases(context, fixtures);
    describeControlCallCases(context, fixtures);
  });
}

/** What the model sees: the control tools and declarations, and the brokered calls in the stream. */
function describeModelFacingCases(
  { engine, sandbox, sandboxName }: ConformanceContext,
  fixtures: AgentFixtures,
): void {
  const { runtime, lookup, programs } = fixtures;
  const itWith = itWithPrograms(engine.language);
  // No program: what the model reads, which each language writes its own way.
  itWith(
    'gives the model exec, wait, stop and the except tools, and the declarations',
    { javascript: {}, python: {} },
    async () => {
      const confirm = defineTool({
        name: 'confirm',
        description: 'Confirms.',
        input: Type.Object({}),
        execute: () => 'ok',
      });
      const model = new ScriptedModel([{ text: 'nothing to do' }]);
      const agent = defineAgent({
        name: 'research',
        model,
        tools: [lookup, confirm],
        codeMode: codeMode({ engine, sandbox, except: ['confirm'] }),
      });
      await agent.ask('hi', { runtime: runtime() });
      const request = model.calls[0];
      expect(request?.tools?.map((tool) => tool.name)).toEqual(['confirm', 'exec', 'wait', 'stop']);
      const declaration = inLanguage(engine.language, {
        javascript: { lookup: 'help_center_lookup(args: {', confirm: 'confirm(args' },
        python: { lookup: 'async def help_center_lookup(', confirm: 'def confirm(' },
      });
      expect(request?.instructions).toContain(declaration.lookup);
      expect(request?.instructions).not.toContain(declaration.confirm);
    },
  );

  itWith(
    'streams brokered calls by name under their exec, and hides the control calls',
    programs,
    async (program) => {
      const model = new ScriptedModel([
        { toolCalls: [{ id: 'exec-1', name: 'exec', input: { source: program } }] },
        { text: 'Both policies.' },
      ]);
      const agent = defineAgent({
        name: 'research',
        model,
        tools: [lookup],
        codeMode: codeMode({ engine, sandbox }),
      });
      const events: StreamEvent[] = [];
      const stream = agent.streamAsk('What are the policies?', { runtime: runtime() });
      for await (const event of stream) events.push(event);
      const run = await stream.run;
      expect(run.outcome).toBe('completed');
      expect(run.sandbox?.name).toBe(sandboxName);
      const toolEvents = events.filter((event) => event.type.startsWith('tool_'));
      expect(toolEvents.map((event) => [event.type, (event.data as { toolName: string }).toolName])).toEqual([
        ['tool_start', 'help_center_lookup'],
        ['tool_start', 'help_center_lookup'],
        ['tool_stop', 'help_center_lookup'],
        ['tool_stop', 'help_center_lookup'],
      ]);
      for (const event of toolEvents) expect(event.data).toMatchObject({ parentToolCallId: 'exec-1' });
      expect(events.find((event) => event.type === 'program_start')?.data).toMatchObject({
        toolCallId: 'exec-1',
        source: program,
        engine: engine.name,
      });
      expect(events.find((event) => event.type === 'program_stop')?.data).toMatchObject({
        status: 'completed',
        output: 'Refunds within 30 days.\nShips in 3 to 5 days.\n',
      });
      expect(JSON.parse(lastToolContent(model))).toEqual({
        status: 'completed',
        output: 'Refunds within 30 days.\nShips in 3 to 5 days.\n',
      });
      expect(await descendantProcesses()).toEqual([]);
    },
  );
}

/** Brokered calls share the run's tool-call budget and its exclusive lock. */
function describeBrokeredCallCases({ engine, sandbox }: ConformanceContext, fixtures: AgentFixtures): void {
  const { runtime, lookup } = fixtures;
  const itWith = itWithPrograms(engine.language);
  itWith(
    'shares maxToolCalls between direct and brokered calls; control calls do not count',
    {
      javascript:
        'const settled = await Promise.allSettled([1, 2, 3, 4].map(() => tools.help_center_lookup({ query: "refund policy" })));\nsettled.map((each) => each.status)',
      // The statuses JavaScript's Promise.allSettled gives, so both languages answer alike.
      python: `import asyncio
settled = await asyncio.gather(
    *(tools.help_center_lookup(query="refund policy") for _ in range(4)),
    return_exceptions=True,
)
["rejected" if isinstance(each, Exception) else "fulfilled" for each in settled]`,
    },
    async (source) => {
      const model = new ScriptedModel([
        { toolCalls: [{ name: 'exec', input: { source } }] },
        { text: 'done' },
      ]);
      const agent = defineAgent({
        name: 'research',
        model,
        tools: [lookup],
        limits: { maxToolCalls: 3 },
        codeMode: codeMode({ engine, sandbox }),
      });
      const run = await agent.ask('go', { runtime: runtime() });
      expect(run.result?.toolCalls).toBe(3);
      const content = JSON.parse(lastToolContent(model)) as ProgramResult;
      expect(content.value).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected']);
    },
  );

  itWith(
    'runs a brokered exclusive tool without deadlocking behind exec',
    { javascript: 'await tools.exclusive_write({})', python: 'await tools.exclusive_write()' },
    async (source) => {
      const exclusive = defineTool({
        name: 'exclusive_write',
        description: 'Writes alone.',
        input: Type.Object({}),
        exclusive: true,
        execute: () => 'written',
      });
      const model = new ScriptedModel([
        { toolCalls: [{ name: 'exec', input: { source } }] },
        { text: 'done' },
      ]);
      const agent = defineAgent({
        name: 'writer',
        model,
        tools: [exclusive],
        codeMode: codeMode({ engine, sandbox }),
      });
      const run = await agent.ask('write', { runtime: runtime(), timeoutMs: 15_000 });
      expect(run.outcome).toBe('completed');
      expect(lastToolContent(model)).toContain('"value":"written"');
    },
  );
}

/** Control calls one at a time, and a cancelled run that leaves nothing running. */
function describeControlCallCases({ engine, sandbox }: ConformanceContext, fixtures: AgentFixtures): void {
  const { runtime, lookup } = fixtures;
  // Programs the same in every language.
  it('refuses a second control call of the same turn without running it', async () => {
    const model = new ScriptedModel([
      {
        toolCalls: [
          { name: 'exec', input: { source: '"first"' } },
          { name: 'exec', input: { source: '"second"' } },
        ],
      },
      { text: 'done' },
    ]);
    const agent = defineAgent({
      name: 'research',
      model,
      tools: [lookup],
      codeMode: codeMode({ engine, sandbox }),
    });
    await agent.ask('go', { runtime: runtime() });
    const results = model.calls[1]?.messages.filter((message) => message.role === 'tool') as {
      content: string;
      isError?: boolean;
    }[];
    expect(results).toHaveLength(2);
    expect(results.filter((result) => result.isError).map((result) => result.content)).toEqual([
      expect.stringMatching(/one control operation at a time/),
    ]);
  });

  itWithPrograms(engine.language)(
    'closes the session when the run is cancelled mid-program, leaving nothing running',
    { javascript: 'await tools.forever({})', python: 'await tools.forever()' },
    async (source) => {
      const forever = foreverTool();
      const model = new ScriptedModel([{ toolCalls: [{ name: 'exec', input: { source } }] }]);
      const agent = defineAgent({
        name: 'research',
        model,
        tools: [forever],
        codeMode: codeMode({ engine, sandbox }),
      });
      const controller = new AbortController();
      const asking = agent.ask('go', { runtime: runtime(), signal: controller.signal });
      await delay(600);
      controller.abort();
      const run = await asking;
      expect(run.outcome).toBe('cancelled');
      expect(await descendantProcesses()).toEqual([]);
    },
  );
}
