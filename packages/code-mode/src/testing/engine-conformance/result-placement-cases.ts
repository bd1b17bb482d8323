import { createRuntime, defineAgent, defineTool, type Tool } from '@ghost/core';
import { ScriptedModel } from '@ghost/core/testing';
import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { codeMode } from '../../code-mode.js';
import type { ProgramResult } from '../../engine.js';
import { openCodeModeSession } from '../../open-code-mode-session.js';
import { descendantProcesses } from '../child-processes.js';
import { inLanguage, itWithPrograms } from './case-programs.js';
import type { ConformanceContext } from './conformance-context.js';
import { echoTool, lastToolContent } from './conformance-fixtures.js';

/**
 * The conformance cases for what a program sends back (result and artifact limits) and where it may run (placements).
 * Registers them under the current `describe`; `describeEngineConformance` runs it with the others.
 */
export function describeResultPlacementCases(context: ConformanceContext): void {
  describe('what a program sends back, and where it may run', () => {
    const sizedTool = defineTool({
      name: 'sized',
      description: 'Returns a string of the size asked for.',
      input: Type.Object({ bytes: Type.Number() }),
      execute: ({ bytes }) => 'r'.repeat(bytes),
    });

    describeResultBytesCases(context, sizedTool);
    describeOutputBytesCases(context);
    describeDepthCases(context);
    describePlacementCases(context);
  });
}

/** Tool results over resultBytes, in a program and in an agent. */
function describeResultBytesCases(
  { engine, sandbox, placement, open }: ConformanceContext,
  sizedTool: Tool,
): void {
  const itWith = itWithPrograms(engine.language);
  itWith(
    'rejects a tool result over resultBytes in the program, naming its size and the limit',
    {
      javascript:
        'const small = await tools.sized({ bytes: 10 });\nconst big = await tools.sized({ bytes: 5000000 }).catch((error) => error.message);\n[small.length, big]',
      python: `small = await tools.sized(bytes=10)
try:
    big = await tools.sized(bytes=5000000)
except ToolError as error:
    big = str(error)
[len(small), big]`,
    },
    async (source) => {
      const { session } = await open({ tools: [sizedTool] });
      const result = await session.execute(source);
      expect(result).toEqual({
        status: 'completed',
        output: '',
        value: [
          10,
          'The result of tools.sized is 5,000,002 bytes of JSON, over the 4,194,304-byte limit (limits.resultBytes), so it was not sent to the program. Ask the tool for less (narrower arguments, fewer items or fields).',
        ],
      });
    },
  );

  itWith(
    'survives eight 9 MB tool results at once in an agent, leaving no process or workspace',
    {
      javascript:
        'const settled = await Promise.allSettled(Array.from({ length: 8 }, () => tools.sized({ bytes: 9000000 })));\nsettled.map((each) => each.status === "fulfilled" ? each.value.length : each.reason.message)',
      python: `import asyncio
settled = await asyncio.gather(*(tools.sized(bytes=9000000) for _ in range(8)), return_exceptions=True)
[str(each) if isinstance(each, Exception) else len(each) for each in settled]`,
    },
    async (source) => {
      const { mkdtemp, readdir, rm } = await import('node:fs/promises');
      const { tmpdir } = await import('node:os');
      const { join } = await import('node:path');
      const workspaceRoot = await mkdtemp(join(tmpdir(), 'ghost-results-'));
      try {
        const model = new ScriptedModel([
          {
            toolCalls: [
              {
                name: 'exec',
                input: { source },
              },
            ],
          },
          { text: 'done' },
        ]);
        const agent = defineAgent({
          name: 'research',
          model,
          tools: [sizedTool],
          codeMode: codeMode({ engine, sandbox, placement }),
        });
        const run = await agent.ask('go', {
          runtime: createRuntime({ engines: [engine], workspaceRoot }),
        });
        expect(run.outcome).toBe('completed');
        const content = JSON.parse(lastToolContent(model)) as ProgramResult;
        expect(content.status).toBe('completed');
        expect(content.value).toEqual(
          Array.from(
            { length: 8 },
            () =>
              'The result of tools.sized is 9,000,002 bytes of JSON, over the 4,194,304-byte limit (limits.resultBytes), so it was not sent to the program. Ask the tool for less (narrower arguments, fewer items or fields).',
          ),
        );
        expect(await descendantProcesses()).toEqual([]);
        expect(await readdir(workspaceRoot)).toEqual([]);
      } finally {
        await rm(workspaceRoot, { recursive: true, force: true });
      }
    },
  );
}

/** Values and errors over outputBytes, and values too large to send. */
function describeOutputBytesCases({ engine, open }: ConformanceContext): void {
  const itWith = itWithPrograms(engine.language);
  itWith(
    'turns a value over outputBytes into an error that names its size and what to do',
    {
      javascript: { over: '"v".repeat(20000)', under: '"v".repeat(9000)' },
      python: { over: '"v" * 20000', under: '"v" * 9000' },
    },
    async ({ over, under }) => {
      const { session } = await open({ limits: { outputBytes: 10_000 } });
      expect(await session.execute(over)).toEqual({
        status: 'error',
        output: '',
        error:
          "The program's value is 20,002 bytes of JSON, over the 10,000-byte limit (limits.outputBytes). Return less (a summary, a count, the first items), or write it with text() or console.log, whose output keeps its head and tail.",
      });
      expect((await session.execute(under)).value).toBe('v'.repeat(9000));
    },
  );

  itWith(
    'keeps the head and the tail of an error message over outputBytes',
    {
      javascript: 'throw new Error("start " + "e".repeat(50000) + " end")',
      python: 'raise RuntimeError("start " + "e" * 50000 + " end")',
    },
    async (source) => {
      const { session } = await open({ limits: { outputBytes: 10_000 } });
      const result = await session.execute(source);
      expect(result.status).toBe('error');
      const error = result.error ?? '';
      expect(Buffer.byteLength(error)).toBeLessThanOrEqual(10_000);
      const errorName = inLanguage(engine.language, { javascript: 'Error', python: 'RuntimeError' });
      expect(error.slice(0, errorName.length + 2)).toBe(`${errorName}: `);
      expect(error.slice(errorName.length + 2)).toMatch(
        /^start e+\n\[… [\d,]+ bytes of the error message cut here: it passed its 10,000-byte limit \(limits\.outputBytes\), so its start and end are kept …\]\ne+ end/,
      );
    },
  );

  itWith(
    'ends a program whose value is too large to send with an error that says so, and runs the next',
    { javascript: `"x".repeat(${66 * 1024 * 1024})`, python: `"x" * ${66 * 1024 * 1024}` },
    async (source) => {
      // 66 MiB of JSON: over the 64 MiB frame cap, so no host could send it in a frame.
      const { session } = await open({
        limits: { memoryBytes: 512 * 1024 * 1024 },
        observationWindowMs: 100_000,
      });
      const result = await session.execute(source);
      expect(result).toEqual({
        status: 'error',
        output: '',
        error:
          "The program's value is 69,206,018 bytes of JSON, over the 1,000,000-byte limit (limits.outputBytes). Return less (a summary, a count, the first items), or write it with text() or console.log, whose output keeps its head and tail.",
      });
      expect((await session.execute('"next"')).value).toBe('next');
    },
    120_000,
  );
}

/** Values nested deeper than code mode carries. */
function describeDepthCases({ engine, open }: ConformanceContext): void {
  const itWith = itWithPrograms(engine.language);
  // Python says lists and dicts where JavaScript says arrays and objects.
  const deepArguments = inLanguage(engine.language, {
    javascript:
      'The arguments of tools.echo nest deeper than 256 levels of arrays and objects, more than code mode carries. Pass flatter arguments.',
    python: expect.stringMatching(
      /^The arguments of tools\.echo nests? deeper than 256 levels of lists and dicts, more than code mode carries\./,
    ),
  });
  const pythonDeep = (levels: number) => `deep = 1\nfor _ in range(${levels}):\n    deep = [deep]\n`;
  itWith(
    'refuses tool arguments nested deeper than code mode carries, in the program',
    {
      javascript:
        'let deep = 1;\nfor (let i = 0; i < 300; i++) deep = [deep];\nawait tools.echo({ text: "x", deep }).catch((error) => error.message)',
      python: `${pythonDeep(300)}try:\n    await tools.echo(text="x", deep=deep)\nexcept Exception as error:\n    message = str(error)\nmessage`,
    },
    async (source) => {
      const log: unknown[] = [];
      const { session } = await open({ tools: [echoTool(log)] });
      const result = await session.execute(source);
      expect(result.value).toEqual(deepArguments);
      expect(log).toEqual([]);
    },
  );

  const javascriptDeep = 'let deep = 1;\nfor (let i = 0; i < 10000; i++) deep = [deep];\n';
  itWith(
    'refuses values nested thousands of levels deep by name, as the value, as arguments and in output',
    {
      javascript: {
        value: `${javascriptDeep}deep`,
        call: `${javascriptDeep}await tools.echo({ text: "x", deep }).catch((error) => error.message)`,
        output: `${javascriptDeep}console.log(deep); text({ deep }); "printed"`,
      },
      // print() is Python's own; text() is the guest API's.
      python: {
        value: `${pythonDeep(10000)}deep`,
        call: `${pythonDeep(10000)}try:\n    await tools.echo(text="x", deep=deep)\nexcept Exception as error:\n    message = str(error)\nmessage`,
        output: `${pythonDeep(10000)}text({"deep": deep})\ntext({"deep": deep})\n"printed"`,
      },
    },
    async (sources) => {
      const log: unknown[] = [];
      const { session } = await open({ tools: [echoTool(log)] });
      expect(await session.execute(sources.value)).toEqual({
        status: 'error',
        output: '',
        error: inLanguage(engine.language, {
          javascript:
            "TypeError: The program's value nests deeper than 256 levels of arrays and objects, more than code mode carries. Return a flatter value.",
          python: expect.stringMatching(
            /^TypeError: The program's value nests deeper than 256 levels of lists and dicts, more than code mode carries\./,
          ),
        }),
      });
      const call = await session.execute(sources.call);
      expect(call.value).toEqual(deepArguments);
      expect(log).toEqual([]);
      const nestedTooDeep = inLanguage(engine.language, {
        javascript: 'arrays and objects',
        python: 'lists and dicts',
      });
      expect(await session.execute(sources.output)).toEqual({
        status: 'completed',
        output: `[a value nested deeper than 256 levels of ${nestedTooDeep}]\n[a value nested deeper than 256 levels of ${nestedTooDeep}]\n`,
        value: 'printed',
      });
    },
  );

  itWith(
    "reports a program's own builtin overflowing the stack on a deep value as that, never as a bare engine failure",
    {
      javascript:
        'let deep = 1;\nfor (let i = 0; i < 100000; i++) deep = [deep];\nJSON.stringify(deep).length',
      python: `import json\n${pythonDeep(100000)}len(json.dumps(deep))`,
    },
    async (source) => {
      const { session } = await open();
      const result = await session.execute(source);
      // An engine whose stack holds it completes; one whose builtin overflows says what happened.
      if (result.status !== 'completed') {
        expect(result.status).toBe('error');
        expect(result.error).not.toMatch(/engine failed/);
        expect(result.error).toMatch(
          inLanguage(engine.language, {
            javascript: /nested too deeply|call stack|stack overflow/i,
            // CPython's recursion limit, or, when the C stack runs out first, the engine's account of it.
            python: /^RecursionError: maximum recursion depth exceeded|nested too deeply/,
          }),
        );
      }
      expect((await session.execute('"next"')).value).toBe('next');
    },
  );
}

/** Where a program may run. */
function describePlacementCases({ engine, sandbox, sandboxName }: ConformanceContext): void {
  it.skipIf(sandboxName === 'unrestricted')(
    `refuses placement 'thread' with sandbox '${sandboxName}' through open(), openCodeModeSession and codeMode()${sandboxName === 'unrestricted' ? " (skipped: 'unrestricted' is the one sandbox the thread placement may name)" : ''}`,
    async () => {
      const { createSandboxFactory } = await import('../../parent/sandbox-factory.js');
      const { resolveCodeModeLimits } = await import('../../limits.js');
      const { ToolBroker } = await import('../../tool-broker.js');
      const { ToolCatalog } = await import('../../tool-catalog.js');
      const refusal = {
        name: 'CodeModeConfigurationError',
        code: 'CODE_MODE_THREAD_NEEDS_UNRESTRICTED',
        message: expect.stringMatching(
          /placement 'thread' .* needs sandbox: 'unrestricted' named explicitly/,
        ),
      };
      const limits = resolveCodeModeLimits();
      const catalog = ToolCatalog.fromTools([], 'conformance');
      const factory = await createSandboxFactory(sandbox, createRuntime(), limits);
      await expect(
        (async () =>
          engine.open({
            broker: new ToolBroker({
              catalog,
              limits,
              callTool: () => Promise.reject(new Error('no tools')),
            }),
            sandbox: factory,
            limits,
            catalog,
            placement: 'thread',
            observationWindowMs: 1_000,
            prewarm: true,
          }))(),
      ).rejects.toMatchObject(refusal);
      await expect(openCodeModeSession({ engine, sandbox, placement: 'thread' })).rejects.toMatchObject(
        refusal,
      );
      expect(() =>
        defineAgent({
          name: 'research',
          model: new ScriptedModel([{ text: 'hi' }]),
          codeMode: codeMode({ engine, sandbox, placement: 'thread' }),
        }),
      ).toThrow(expect.objectContaining(refusal));
      expect(await descendantProcesses()).toEqual([]);
    },
  );
}
