import { defineTool } from '@ghost/core';
import { Type } from 'typebox';
import { describe, expect } from 'vitest';
import { CodeModeSourceTooLargeError } from '../../errors.js';
import { type ByLanguage, type CasePrograms, inLanguage, itWithPrograms } from './case-programs.js';
import type { ConformanceContext } from './conformance-context.js';
import { delay, echoTool } from './conformance-fixtures.js';
import { unboundedMemoryReason } from './conformance-requirement.js';

/**
 * The conformance cases for bad programs: syntax errors, runaway loops, memory, output floods, oversized sources, escapes from the guest.
 * Registers them under the current `describe`; `describeEngineConformance` runs it with the others.
 */
export function describeBadProgramCases(context: ConformanceContext): void {
  // Asynchronous, so the cases are registered once the sandbox says what it enforces.
  describe('bad programs', async () => {
    const memoryReason = await unboundedMemoryReason(context);
    describeProgramErrorCases(context);
    describeRunawayProgramCases(context);
    describeNotJsonValueCases(context);
    describeNotJsonCallCases(context);
    describeFloodCases(context);
    describeOutputFloodCases(context);
    describeResourceLimitCases(context, memoryReason);
  });
}

/** Programs that fail: syntax and runtime errors. */
function describeProgramErrorCases({ engine, open }: ConformanceContext): void {
  const itWith = itWithPrograms(engine.language);
  itWith(
    'reports a syntax error with its line and column, running nothing',
    {
      javascript: 'await tools.echo({ text: "a" });\nconst = 1;',
      python: 'await tools.echo(text="a")\nvalue = = 1',
    },
    async (source) => {
      const log: unknown[] = [];
      const { session } = await open({ tools: [echoTool(log)] });
      const result = await session.execute(source);
      expect(result).toEqual({
        status: 'error',
        output: '',
        error: inLanguage(engine.language, {
          javascript: 'SyntaxError: Unexpected token (line 2, column 7)',
          // Python's own message, at its line (and column, where the engine gives it).
          python: expect.stringMatching(/^SyntaxError: invalid syntax \(line 2(, column 9)?\)$/),
        }),
      });
      expect(log).toEqual([]);
    },
  );

  itWith(
    'reports a runtime throw with its message, keeping the output written before it',
    {
      javascript: { failing: 'text("before");\nnull.property', thrown: 'throw new RangeError("too far")' },
      python: { failing: 'text("before")\nNone.property', thrown: 'raise ValueError("too far")' },
    },
    async ({ failing, thrown: thrownSource }) => {
      const { session } = await open();
      const result = await session.execute(failing);
      expect(result.status).toBe('error');
      expect(result.output).toBe('before\n');
      expect(result.error).toMatch(
        inLanguage(engine.language, {
          javascript: /^TypeError: .*null/,
          python: /^AttributeError: .*'NoneType'/,
        }),
      );
      const thrown = await session.execute(thrownSource);
      expect(thrown.error).toMatch(
        inLanguage(engine.language, { javascript: /^RangeError: too far/, python: /^ValueError: too far/ }),
      );
    },
  );
}

/** Programs that run away: an endless loop, deep recursion. */
function describeRunawayProgramCases({ engine, open }: ConformanceContext): void {
  const itWith = itWithPrograms(engine.language);
  itWith(
    'stops an infinite loop at cpuSeconds, and the next program runs',
    {
      javascript: 'while (true) {}',
      python: 'while True:\n    pass',
    },
    async (source) => {
      const { session } = await open({ limits: { cpuSeconds: 0.5 } });
      const result = await session.execute(source);
      expect(result.status).toBe('error');
      expect(result.error).toMatch(/CPU limit of 0\.5 s/);
      expect((await session.execute('"alive"')).value).toBe('alive');
    },
  );

  itWith(
    'turns deep recursion into a catchable error, and the next program runs',
    {
      javascript: {
        uncaught: 'function down(n) { return down(n + 1) + 1 }\ndown(0)',
        caught:
          'function down(n) { return down(n + 1) + 1 }\nlet value;\ntry { down(0) } catch { value = "caught" }\nvalue',
      },
      python: {
        uncaught: 'def down(n):\n    return down(n + 1) + 1\n\ndown(0)',
        caught:
          'def down(n):\n    return down(n + 1) + 1\n\ntry:\n    down(0)\nexcept RecursionError:\n    value = "caught"\nvalue',
      },
    },
    async ({ uncaught, caught: caughtSource }) => {
      const { session } = await open();
      const result = await session.execute(uncaught);
      expect(result.status).toBe('error');
      expect(result.error).toMatch(/stack|call stack|recursion/i);
      const caught = await session.execute(caughtSource);
      expect(caught.value).toBe('caught');
    },
  );
}

/** A program value that is not JSON: one case for each kind of value a language has and JSON has not. */
interface NotJsonKind {
  readonly what: string;
  readonly programs: CasePrograms<string>;
  /** What the error says of it: its kind and where it is. */
  readonly message: RegExp | ByLanguage<RegExp>;
}

const notJsonKinds: readonly NotJsonKind[] = [
  {
    what: 'a cycle',
    programs: {
      javascript: 'const value = { name: "loop" }; value.self = value; value',
      python: 'value = {"name": "loop"}\nvalue["self"] = value\nvalue',
    },
    message: { javascript: /refers to itself at \.self/, python: /refers to itself at .*self/ },
  },
  {
    what: 'a BigInt',
    programs: {
      javascript: '({ big: 10n })',
      javascriptOnly: 'Python has no BigInt: its int is JSON at any size',
    },
    message: /a BigInt at \.big/,
  },
  {
    what: 'a function',
    programs: { javascript: '[1, () => 2]', python: '[1, lambda: 2]' },
    message: /a function at \[1\]/,
  },
  {
    what: 'a Symbol',
    programs: { javascript: 'Symbol("s")', javascriptOnly: 'Python has no Symbol' },
    message: /a Symbol at the top level/,
  },
];

/** Program values that are not JSON. */
function describeNotJsonValueCases({ engine, open }: ConformanceContext): void {
  const itWith = itWithPrograms(engine.language);
  for (const { what, programs, message } of notJsonKinds) {
    itWith(`refuses a program value with ${what} as not JSON`, programs, async (source) => {
      const { session } = await open();
      const result = await session.execute(source);
      expect(result.status).toBe('error');
      expect(result.error).toMatch(/^TypeError: The program's value is not JSON: /);
      expect(result.error).toMatch(
        message instanceof RegExp ? message : inLanguage(engine.language, message),
      );
    });
  }
}

/** Tool arguments and tool results that are not JSON. */
function describeNotJsonCallCases({ engine, open }: ConformanceContext): void {
  const itWith = itWithPrograms(engine.language);
  itWith(
    'refuses tool arguments that are not JSON before any call is made',
    {
      javascript: 'await tools.echo({ text: 1n }).catch((error) => error.message)',
      python:
        'try:\n    await tools.echo(text={1, 2})\nexcept TypeError as error:\n    message = str(error)\nmessage',
    },
    async (source) => {
      const log: unknown[] = [];
      const { session } = await open({ tools: [echoTool(log)] });
      const result = await session.execute(source);
      expect(result.value).toMatch(
        inLanguage(engine.language, {
          javascript: /The arguments of tools\.echo is not JSON: a BigInt at \.text/,
          python: /The arguments of tools\.echo is not JSON: a set at .*text/,
        }),
      );
      expect(log).toEqual([]);
    },
  );

  itWith(
    'refuses tool arguments and a program value whose toJSON() gives undefined, naming them',
    {
      javascript: {
        argument:
          'await tools.echo({ toJSON() { return undefined; } }).catch((error) => [error.name, error.message])',
        value: '({ toJSON() { return undefined; } })',
        nested: '({ kept: 1, dropped: { toJSON() { return undefined; } } })',
      },
      javascriptOnly: 'toJSON() is how JavaScript gives an object its JSON',
    },
    async ({ argument, value: valueSource, nested: nestedSource }) => {
      const log: unknown[] = [];
      const { session } = await open({ tools: [echoTool(log)] });
      const result = await session.execute(argument);
      expect(result.status).toBe('completed');
      expect(result.value).toEqual([
        'TypeError',
        expect.stringMatching(/^The arguments of tools\.echo is not JSON: its toJSON\(\) returned undefined/),
      ]);
      expect(log).toEqual([]);
      const value = await session.execute(valueSource);
      expect(value.status).toBe('error');
      expect(value.error).toMatch(
        /^TypeError: The program's value is not JSON: its toJSON\(\) returned undefined/,
      );
      const nested = await session.execute(nestedSource);
      expect(nested).toMatchObject({ status: 'completed', value: { kept: 1 } });
    },
  );

  itWith(
    'turns a tool result that is not JSON into a rejection (details stay in the events)',
    {
      javascript: 'await tools.bad_result({}).then(() => "resolved", (error) => error.message)',
      python:
        'try:\n    await tools.bad_result()\n    outcome = "resolved"\nexcept ToolError as error:\n    outcome = str(error)\noutcome',
    },
    async (source) => {
      const badResult = defineTool({
        name: 'bad_result',
        description: 'Returns something that is not JSON.',
        input: Type.Object({}),
        execute: () => ({ when: 10n }) as unknown as string,
      });
      const { session, events } = await open({ tools: [badResult] });
      const result = await session.execute(source);
      expect(result.value).toBe('Tool failed (ToolResultInvalidError)');
      const stop = events.find((event) => event.type === 'tool_stop');
      expect(stop?.data).toMatchObject({
        status: 'error',
        error: { message: expect.stringMatching(/not JSON/) },
      });
    },
  );
}

/** Oversized sources and floods of output. */
function describeFloodCases({ engine, open }: ConformanceContext): void {
  const itWith = itWithPrograms(engine.language);
  itWith(
    'refuses source over sourceBytes before starting anything',
    {
      javascript: `// ${'x'.repeat(200)}`,
      python: `# ${'x'.repeat(200)}`,
    },
    async (source) => {
      const { session } = await open({ limits: { sourceBytes: 100 } });
      await expect(session.execute(source)).rejects.toThrow(CodeModeSourceTooLargeError);
      expect((await session.execute('1')).value).toBe(1);
    },
  );

  itWith(
    'truncates huge output, keeping the head and the tail and saying how much was cut',
    {
      javascript: 'for (let i = 0; i < 5000; i++) console.log("line " + i); "done"',
      python: 'for i in range(5000):\n    print("line", i)\n"done"',
    },
    async (source) => {
      const { session } = await open({ limits: { outputBytes: 10_000 } });
      const result = await session.execute(source);
      expect(result.status).toBe('completed');
      expect(result.output.startsWith('line 0\nline 1\n')).toBe(true);
      expect(result.output.endsWith('line 4998\nline 4999\n')).toBe(true);
      expect(result.output).toMatch(
        /\[… [\d,]+ bytes of output cut here: the output passed its 10,000-byte limit/,
      );
      expect(Buffer.byteLength(result.output)).toBeLessThan(10_300);
    },
  );
}

/** Floods of output past outputBytes. */
function describeOutputFloodCases({ engine, open }: ConformanceContext): void {
  const itWith = itWithPrograms(engine.language);
  // Short lines make the most writes; long ones more bytes than a host may grow by at default
  // limits (the engine's own check, and the sandbox's memory limit where it has one): had the
  // host kept what it drops, it would have been stopped.
  const paddings = { short: '', long: 'x'.repeat(490) };
  const javascriptLines = (padding: string) =>
    `const padding = ${JSON.stringify(padding)};\nfor (let i = 0; i < 500000; i++) console.log(i + " " + padding);\n"done"`;
  const pythonLines = (padding: string) =>
    `padding = ${JSON.stringify(padding)}\nfor i in range(500000):\n    print(i, padding)\n"done"`;
  itWith(
    'drops output past outputBytes for the cost of a counter: 500,000 lines, short ones and 250 MB of long ones',
    {
      javascript: { short: javascriptLines(paddings.short), long: javascriptLines(paddings.long) },
      python: { short: pythonLines(paddings.short), long: pythonLines(paddings.long) },
    },
    async (sources) => {
      // 250 MB of console output takes seconds, more on a loaded machine: the window covers it.
      const { session } = await open({ observationWindowMs: 120_000 });
      for (const length of ['short', 'long'] as const) {
        const padding = paddings[length];
        const result = await session.execute(sources[length]);
        expect(result.error).toBeUndefined();
        expect(result).toMatchObject({ status: 'completed', value: 'done' });
        expect(result.output.startsWith(`0 ${padding}\n1 ${padding}\n`)).toBe(true);
        expect(result.output.endsWith(`499998 ${padding}\n499999 ${padding}\n`)).toBe(true);
        const marker =
          /\n\[… ([\d,]+) bytes of output cut here: the output passed its 1,000,000-byte limit, so its start and end are kept …\]\n/.exec(
            result.output,
          );
        expect(marker).not.toBeNull();
        let writtenBytes = 0;
        for (let i = 0; i < 500_000; i += 1) writtenBytes += `${i} ${padding}\n`.length;
        const keptBytes = Buffer.byteLength(result.output) - Buffer.byteLength(marker?.[0] ?? '');
        expect(keptBytes).toBeLessThanOrEqual(1_000_000);
        expect(keptBytes + Number(marker?.[1]?.replaceAll(',', ''))).toBe(writtenBytes);
      }
    },
  );

  itWith(
    'captures 10,000 tiny console.log calls completely',
    {
      javascript: 'for (let i = 0; i < 10000; i++) console.log(i); "done"',
      python: 'for i in range(10000):\n    print(i)\n"done"',
    },
    async (source) => {
      const { session } = await open();
      const result = await session.execute(source);
      const lines = result.output.trimEnd().split('\n');
      expect(lines).toHaveLength(10_000);
      expect(lines[9_999]).toBe('9999');
    },
  );
}

/** Floods of tool calls, and memory, held to the limits. */
function describeResourceLimitCases(
  { engine, open }: ConformanceContext,
  memoryReason: string | undefined,
): void {
  const itWith = itWithPrograms(engine.language);
  itWith(
    'stops a tool-call flood at limits.toolCalls: the rest fail without running',
    {
      javascript:
        'const settled = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => tools.echo({ text: String(i) })));\nsettled.map((each) => each.status === "fulfilled" ? "ok" : each.reason.message)',
      python: `import asyncio
settled = await asyncio.gather(*(tools.echo(text=str(i)) for i in range(12)), return_exceptions=True)
[str(each) if isinstance(each, Exception) else "ok" for each in settled]`,
    },
    async (source) => {
      const log: unknown[] = [];
      const { session } = await open({ tools: [echoTool(log)], limits: { toolCalls: 5 } });
      const result = await session.execute(source);
      const values = result.value as string[];
      expect(values.filter((value) => value === 'ok')).toHaveLength(5);
      expect(values.filter((value) => /limit of 5 tool calls/.test(value))).toHaveLength(7);
      expect(log).toHaveLength(5);
    },
  );

  itWith(
    'queues Promise.all past limits.concurrency: never more in flight, all complete',
    {
      javascript: '(await Promise.all(Array.from({ length: 12 }, () => tools.slow({})))).length',
      python: 'import asyncio\nlen(await asyncio.gather(*(tools.slow() for _ in range(12))))',
    },
    async (source) => {
      let inFlight = 0;
      let peak = 0;
      const slow = defineTool({
        name: 'slow',
        description: 'Takes 20 ms.',
        input: Type.Object({}),
        async execute() {
          inFlight += 1;
          peak = Math.max(peak, inFlight);
          await delay(20);
          inFlight -= 1;
          return 'ok';
        },
      });
      const { session } = await open({ tools: [slow], limits: { concurrency: 3 } });
      const result = await session.execute(source);
      expect(result.value).toBe(12);
      expect(peak).toBe(3);
    },
  );

  itWithPrograms(engine.language, memoryReason)(
    'survives a memory bomb: the program ends with a memory error, and the next program runs',
    {
      javascript: 'const hoard = []; for (;;) hoard.push(new Array(10000).fill(Math.random()))',
      python: 'import random\nhoard = []\nwhile True:\n    hoard.append([random.random()] * 10000)',
    },
    async (source) => {
      // An interpreter needs memory of its own to start: Python's is far larger than JavaScript's.
      const memoryBytes = inLanguage(engine.language, { javascript: 32, python: 256 }) * 1024 * 1024;
      const { session } = await open({ limits: { memoryBytes } });
      const result = await session.execute(source);
      expect(result.status).toBe('error');
      expect(result.error).toMatch(/memory/i);
      expect((await session.execute('"alive"')).value).toBe('alive');
    },
  );
}
