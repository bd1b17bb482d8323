import { createRuntime, defineAgent, defineTool, type Tool } from '@ghost/core';
import { ScriptedModel } from '@ghost/core/testing';
import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { codeMode } from '../../code-mode.js';
import type { ProgramResult } from '../../engine.js';
import { openCodeModeSession } from '../../open-code-mode-session.js';
import { descendantProcesses } from '../child-processes.js';
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
  it('rejects a tool result over resultBytes in the program, naming its size and the limit', async () => {
    const { session } = await open({ tools: [sizedTool] });
    const result = await session.execute(
      'const small = await tools.sized({ bytes: 10 });\nconst big = await tools.sized({ bytes: 5000000 }).catch((error) => error.message);\n[small.length, big]',
    );
    expect(result).toEqual({
      status: 'completed',
      output: '',
      value: [
        10,
        'The result of tools.sized is 5,000,002 bytes of JSON, over the 4,194,304-byte limit (limits.resultBytes), so it was not sent to the program. Ask the tool for less (narrower arguments, fewer items or fields).',
      ],
    });
  });

  it('survives eight 9 MB tool results at once in an agent, leaving no process or workspace', async () => {
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
              input: {
                source:
                  'const settled = await Promise.allSettled(Array.from({ length: 8 }, () => tools.sized({ bytes: 9000000 })));\nsettled.map((each) => each.status === "fulfilled" ? each.value.length : each.reason.message)',
              },
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
  });
}

/** Values and errors over outputBytes, and values too large to send. */
function describeOutputBytesCases({ open }: ConformanceContext): void {
  it('turns a value over outputBytes into an error that names its size and what to do', async () => {
    const { session } = await open({ limits: { outputBytes: 10_000 } });
    expect(await session.execute('"v".repeat(20000)')).toEqual({
      status: 'error',
      output: '',
      error:
        "The program's value is 20,002 bytes of JSON, over the 10,000-byte limit (limits.outputBytes). Return less (a summary, a count, the first items), or write it with text() or console.log, whose output keeps its head and tail.",
    });
    expect((await session.execute('"v".repeat(9000)')).value).toBe('v'.repeat(9000));
  });

  it('keeps the head and the tail of an error message over outputBytes', async () => {
    const { session } = await open({ limits: { outputBytes: 10_000 } });
    const result = await session.execute('throw new Error("start " + "e".repeat(50000) + " end")');
    expect(result.status).toBe('error');
    const error = result.error ?? '';
    expect(Buffer.byteLength(error)).toBeLessThanOrEqual(10_000);
    expect(error).toMatch(
      /^Error: start e+\n\[… [\d,]+ bytes of the error message cut here: it passed its 10,000-byte limit \(limits\.outputBytes\), so its start and end are kept …\]\ne+ end/,
    );
  });

  it('ends a program whose value is too large to send with an error that says so, and runs the next', async () => {
    // 66 MiB of JSON: over the 64 MiB frame cap, so no host could send it in a frame.
    const { session } = await open({
      limits: { memoryBytes: 512 * 1024 * 1024 },
      observationWindowMs: 100_000,
    });
    const result = await session.execute(`"x".repeat(${66 * 1024 * 1024})`);
    expect(result).toEqual({
      status: 'error',
      output: '',
      error:
        "The program's value is 69,206,018 bytes of JSON, over the 1,000,000-byte limit (limits.outputBytes). Return less (a summary, a count, the first items), or write it with text() or console.log, whose output keeps its head and tail.",
    });
    expect((await session.execute('"next"')).value).toBe('next');
  }, 120_000);
}

/** Values nested deeper than code mode carries. */
function describeDepthCases({ open }: ConformanceContext): void {
  it('refuses tool arguments nested deeper than code mode carries, in the program', async () => {
    const log: unknown[] = [];
    const { session } = await open({ tools: [echoTool(log)] });
    const result = await session.execute(
      'let deep = 1;\nfor (let i = 0; i < 300; i++) deep = [deep];\nawait tools.echo({ text: "x", deep }).catch((error) => error.message)',
    );
    expect(result.value).toBe(
      'The arguments of tools.echo nest deeper than 256 levels of arrays and objects, more than code mode carries. Pass flatter arguments.',
    );
    expect(log).toEqual([]);
  });

  it('refuses values nested thousands of levels deep by name, as the value, as arguments and in output', async () => {
    const log: unknown[] = [];
    const { session } = await open({ tools: [echoTool(log)] });
    const deep = 'let deep = 1;\nfor (let i = 0; i < 10000; i++) deep = [deep];\n';
    expect(await session.execute(`${deep}deep`)).toEqual({
      status: 'error',
      output: '',
      error:
        "TypeError: The program's value nests deeper than 256 levels of arrays and objects, more than code mode carries. Return a flatter value.",
    });
    const call = await session.execute(
      `${deep}await tools.echo({ text: "x", deep }).catch((error) => error.message)`,
    );
    expect(call.value).toBe(
      'The arguments of tools.echo nest deeper than 256 levels of arrays and objects, more than code mode carries. Pass flatter arguments.',
    );
    expect(log).toEqual([]);
    expect(await session.execute(`${deep}console.log(deep); text({ deep }); "printed"`)).toEqual({
      status: 'completed',
      output:
        '[a value nested deeper than 256 levels of arrays and objects]\n[a value nested deeper than 256 levels of arrays and objects]\n',
      value: 'printed',
    });
  });

  it("reports a program's own builtin overflowing the stack on a deep value as that, never as a bare engine failure", async () => {
    const { session } = await open();
    const result = await session.execute(
      'let deep = 1;\nfor (let i = 0; i < 100000; i++) deep = [deep];\nJSON.stringify(deep).length',
    );
    // An engine whose stack holds it completes; one whose builtin overflows says what happened.
    if (result.status !== 'completed') {
      expect(result.status).toBe('error');
      expect(result.error).not.toMatch(/engine failed/);
      expect(result.error).toMatch(/nested too deeply|call stack|stack overflow/i);
    }
    expect((await session.execute('"next"')).value).toBe('next');
  });
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
