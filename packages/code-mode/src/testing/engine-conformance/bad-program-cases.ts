import { defineTool } from '@ghost/core';
import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { CodeModeSourceTooLargeError } from '../../errors.js';
import type { ConformanceContext } from './conformance-context.js';
import { delay, echoTool } from './conformance-fixtures.js';
import { itUnless, unboundedMemoryReason } from './conformance-requirement.js';

/**
 * The conformance cases for bad programs: syntax errors, runaway loops, memory, output floods, oversized sources, escapes from the guest.
 * Registers them under the current `describe`; `describeEngineConformance` runs it with the others.
 */
export function describeBadProgramCases(context: ConformanceContext): void {
  // Asynchronous, so the cases are registered once the sandbox says what it enforces.
  describe('bad programs', async () => {
    const memoryReason = await unboundedMemoryReason(context);
    describeProgramErrorCases(context);
    describeNotJsonCases(context);
    describeFloodCases(context);
    describeResourceLimitCases(context, memoryReason);
  });
}

/** Programs that fail or run away: syntax and runtime errors, an endless loop, deep recursion. */
function describeProgramErrorCases({ open }: ConformanceContext): void {
  it('reports a syntax error with its line and column, running nothing', async () => {
    const log: unknown[] = [];
    const { session } = await open({ tools: [echoTool(log)] });
    const result = await session.execute('await tools.echo({ text: "a" });\nconst = 1;');
    expect(result).toEqual({
      status: 'error',
      output: '',
      error: 'SyntaxError: Unexpected token (line 2, column 7)',
    });
    expect(log).toEqual([]);
  });

  it('reports a runtime throw with its message, keeping the output written before it', async () => {
    const { session } = await open();
    const result = await session.execute('text("before");\nnull.property');
    expect(result.status).toBe('error');
    expect(result.output).toBe('before\n');
    expect(result.error).toMatch(/^TypeError: .*null/);
    const thrown = await session.execute('throw new RangeError("too far")');
    expect(thrown.error).toMatch(/^RangeError: too far/);
  });

  it('stops an infinite loop at cpuSeconds, and the next program runs', async () => {
    const { session } = await open({ limits: { cpuSeconds: 0.5 } });
    const result = await session.execute('while (true) {}');
    expect(result.status).toBe('error');
    expect(result.error).toMatch(/CPU limit of 0\.5 s/);
    expect((await session.execute('"alive"')).value).toBe('alive');
  });

  it('turns deep recursion into a catchable error, and the next program runs', async () => {
    const { session } = await open();
    const result = await session.execute('function down(n) { return down(n + 1) + 1 }\ndown(0)');
    expect(result.status).toBe('error');
    expect(result.error).toMatch(/stack|call stack|recursion/i);
    const caught = await session.execute(
      'function down(n) { return down(n + 1) + 1 }\nlet value;\ntry { down(0) } catch { value = "caught" }\nvalue',
    );
    expect(caught.value).toBe('caught');
  });
}

/** Values, tool arguments and tool results that are not JSON. */
function describeNotJsonCases({ open }: ConformanceContext): void {
  it.each([
    ['a cycle', 'const value = { name: "loop" }; value.self = value; value', /refers to itself at \.self/],
    ['a BigInt', '({ big: 10n })', /a BigInt at \.big/],
    ['a function', '[1, () => 2]', /a function at \[1\]/],
    ['a Symbol', 'Symbol("s")', /a Symbol at the top level/],
  ])('refuses a program value with %s as not JSON', async (_what, source, message) => {
    const { session } = await open();
    const result = await session.execute(source);
    expect(result.status).toBe('error');
    expect(result.error).toMatch(/^TypeError: The program's value is not JSON: /);
    expect(result.error).toMatch(message);
  });

  it('refuses tool arguments that are not JSON before any call is made', async () => {
    const log: unknown[] = [];
    const { session } = await open({ tools: [echoTool(log)] });
    const result = await session.execute('await tools.echo({ text: 1n }).catch((error) => error.message)');
    expect(result.value).toMatch(/The arguments of tools\.echo is not JSON: a BigInt at \.text/);
    expect(log).toEqual([]);
  });

  it('refuses tool arguments and a program value whose toJSON() gives undefined, naming them', async () => {
    const log: unknown[] = [];
    const { session } = await open({ tools: [echoTool(log)] });
    const result = await session.execute(
      'await tools.echo({ toJSON() { return undefined; } }).catch((error) => [error.name, error.message])',
    );
    expect(result.status).toBe('completed');
    expect(result.value).toEqual([
      'TypeError',
      expect.stringMatching(/^The arguments of tools\.echo is not JSON: its toJSON\(\) returned undefined/),
    ]);
    expect(log).toEqual([]);
    const value = await session.execute('({ toJSON() { return undefined; } })');
    expect(value.status).toBe('error');
    expect(value.error).toMatch(
      /^TypeError: The program's value is not JSON: its toJSON\(\) returned undefined/,
    );
    const nested = await session.execute('({ kept: 1, dropped: { toJSON() { return undefined; } } })');
    expect(nested).toMatchObject({ status: 'completed', value: { kept: 1 } });
  });

  it('turns a tool result that is not JSON into a rejection (details stay in the events)', async () => {
    const badResult = defineTool({
      name: 'bad_result',
      description: 'Returns something that is not JSON.',
      input: Type.Object({}),
      execute: () => ({ when: 10n }) as unknown as string,
    });
    const { session, events } = await open({ tools: [badResult] });
    const result = await session.execute(
      'await tools.bad_result({}).then(() => "resolved", (error) => error.message)',
    );
    expect(result.value).toBe('Tool failed (ToolResultInvalidError)');
    const stop = events.find((event) => event.type === 'tool_stop');
    expect(stop?.data).toMatchObject({
      status: 'error',
      error: { message: expect.stringMatching(/not JSON/) },
    });
  });
}

/** Oversized sources and floods of output. */
function describeFloodCases({ open }: ConformanceContext): void {
  it('refuses source over sourceBytes before starting anything', async () => {
    const { session } = await open({ limits: { sourceBytes: 100 } });
    await expect(session.execute(`// ${'x'.repeat(200)}`)).rejects.toThrow(CodeModeSourceTooLargeError);
    expect((await session.execute('1')).value).toBe(1);
  });

  it('truncates huge output, keeping the head and the tail and saying how much was cut', async () => {
    const { session } = await open({ limits: { outputBytes: 10_000 } });
    const result = await session.execute('for (let i = 0; i < 5000; i++) console.log("line " + i); "done"');
    expect(result.status).toBe('completed');
    expect(result.output.startsWith('line 0\nline 1\n')).toBe(true);
    expect(result.output.endsWith('line 4998\nline 4999\n')).toBe(true);
    expect(result.output).toMatch(
      /\[… [\d,]+ bytes of output cut here: the output passed its 10,000-byte limit/,
    );
    expect(Buffer.byteLength(result.output)).toBeLessThan(10_300);
  });

  it('drops output past outputBytes for the cost of a counter: 500,000 lines, short ones and 250 MB of long ones', async () => {
    // 250 MB of console output takes seconds, more on a loaded machine: the window covers it.
    const { session } = await open({ observationWindowMs: 120_000 });
    // Short lines make the most writes; long ones more bytes than a host may grow by at
    // default limits (the engine's own check, and the sandbox's memory limit where it has
    // one): had the host kept what it drops, it would have been stopped.
    for (const padding of ['', 'x'.repeat(490)]) {
      const result = await session.execute(
        `const padding = ${JSON.stringify(padding)};\nfor (let i = 0; i < 500000; i++) console.log(i + " " + padding);\n"done"`,
      );
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
  });

  it('captures 10,000 tiny console.log calls completely', async () => {
    const { session } = await open();
    const result = await session.execute('for (let i = 0; i < 10000; i++) console.log(i); "done"');
    const lines = result.output.trimEnd().split('\n');
    expect(lines).toHaveLength(10_000);
    expect(lines[9_999]).toBe('9999');
  });
}

/** Floods of tool calls, and memory, held to the limits. */
function describeResourceLimitCases({ open }: ConformanceContext, memoryReason: string | undefined): void {
  it('stops a tool-call flood at limits.toolCalls: the rest fail without running', async () => {
    const log: unknown[] = [];
    const { session } = await open({ tools: [echoTool(log)], limits: { toolCalls: 5 } });
    const result = await session.execute(
      'const settled = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => tools.echo({ text: String(i) })));\nsettled.map((each) => each.status === "fulfilled" ? "ok" : each.reason.message)',
    );
    const values = result.value as string[];
    expect(values.filter((value) => value === 'ok')).toHaveLength(5);
    expect(values.filter((value) => /limit of 5 tool calls/.test(value))).toHaveLength(7);
    expect(log).toHaveLength(5);
  });

  it('queues Promise.all past limits.concurrency: never more in flight, all complete', async () => {
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
    const result = await session.execute(
      '(await Promise.all(Array.from({ length: 12 }, () => tools.slow({})))).length',
    );
    expect(result.value).toBe(12);
    expect(peak).toBe(3);
  });

  itUnless(memoryReason)(
    'survives a memory bomb: the program ends with a memory error, and the next program runs',
    async () => {
      const { session } = await open({ limits: { memoryBytes: 32 * 1024 * 1024 } });
      const result = await session.execute(
        'const hoard = []; for (;;) hoard.push(new Array(10000).fill(Math.random()))',
      );
      expect(result.status).toBe('error');
      expect(result.error).toMatch(/memory/i);
      expect((await session.execute('"alive"')).value).toBe('alive');
    },
  );
}
