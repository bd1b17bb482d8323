import { runInNewContext } from 'node:vm';
import { defineTool, ToolError } from '@ghost/core';
import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import type { ConformanceContext } from './conformance-context.js';
import { delay, echoTool, Gate, gateTool, observeToEnd } from './conformance-fixtures.js';

/**
 * The conformance cases for the guest API: tool calls, values, output, console, errors thrown by tools and the program, `exit` and `finish`.
 * Registers them under the current `describe`; `describeEngineConformance` runs it with the others.
 */
export function describeGuestApiCases(context: ConformanceContext): void {
  describe('the guest API', () => {
    describeToolCallCases(context);
    describeValueAndOutputCases(context);
    describeIsolationCases(context);
    describeProgramEndCases(context);
  });
}

/** Tool calls from a program: concurrent, by name, failing, and cancelled when it ends. */
function describeToolCallCases({ open }: ConformanceContext): void {
  it('runs Promise.all calls concurrently in the parent, results in order', async () => {
    let inFlight = 0;
    let peak = 0;
    const slow = defineTool({
      name: 'slow',
      description: 'Waits, then echoes.',
      input: Type.Object({ n: Type.Number() }),
      async execute({ n }) {
        inFlight += 1;
        peak = Math.max(peak, inFlight);
        await delay(40);
        inFlight -= 1;
        return n * 2;
      },
    });
    const { session } = await open({ tools: [slow] });
    const result = await session.execute('await Promise.all([1, 2, 3, 4].map((n) => tools.slow({ n })))');
    expect(result.value).toEqual([2, 4, 6, 8]);
    expect(peak).toBe(4);
  });

  it('calls tools by name with tools.call and in parallel with tools.parallel', async () => {
    const lookup = defineTool({
      name: 'help-center-lookup',
      description: 'Looks a topic up.',
      input: Type.Object({ topic: Type.String() }),
      execute: ({ topic }) => `entry for ${topic}`,
    });
    const { session } = await open({ tools: [lookup] });
    const result = await session.execute(`
      const a = await tools.call('help-center-lookup', { topic: 'a' });
      const b = await tools.call('tools.help_center_lookup', { topic: 'b' });
      const [c, d] = await tools.parallel(() => tools.help_center_lookup({ topic: 'c' }), () => tools.help_center_lookup({ topic: 'd' }));
      [a, b, c, d, ALL_TOOLS.map((tool) => [tool.name, tool.toolName, tool.description])]`);
    expect(result.value).toEqual([
      'entry for a',
      'entry for b',
      'entry for c',
      'entry for d',
      [['help_center_lookup', 'help-center-lookup', 'Looks a topic up.']],
    ]);
  });

  it('turns a tool failure into a rejection the program can catch', async () => {
    const failing = defineTool({
      name: 'failing',
      description: 'Always fails.',
      input: Type.Object({}),
      execute: () => {
        throw new ToolError('No such order: ask for the order number.');
      },
    });
    const { session } = await open({ tools: [failing, echoTool()] });
    const caught = await session.execute(
      'try { await tools.failing({}) } catch (error) { text("caught: " + error.message) }\nawait tools.nope({}).catch((error) => error.message)',
    );
    expect(caught.output).toBe('caught: No such order: ask for the order number.\n');
    expect(caught.value).toMatch(/^Unknown tool 'nope'\. Available tools: failing, echo\.$/);
    const invalid = await session.execute('await tools.echo({ text: 42 })');
    expect(invalid.status).toBe('error');
    expect(invalid.error).toMatch(/Invalid tool input: \/text/);
  });

  it('cancels tool calls a program leaves unawaited when it ends', async () => {
    // Depending on timing the call reaches the tool before the program ends, or never does;
    // either way no call outlives its program.
    let isStarted = false;
    let isAborted = false;
    const hang = defineTool({
      name: 'hang',
      description: 'Waits until cancelled.',
      input: Type.Object({}),
      execute: (_input, { signal }) => {
        isStarted = true;
        signal.addEventListener('abort', () => {
          isAborted = true;
        });
        return new Promise(() => {});
      },
    });
    const { session } = await open({ tools: [hang] });
    const result = await session.execute('tools.hang({});\nawait null;\n1');
    expect(result).toMatchObject({ status: 'completed', value: 1 });
    await delay(300);
    expect(isStarted ? isAborted : true).toBe(true);
  });
}

/** What a program gives back: its value, its text and console output, intact. */
function describeValueAndOutputCases({ open }: ConformanceContext): void {
  it('brokers tool calls and returns the final expression as the value', async () => {
    const { session } = await open({ tools: [echoTool()] });
    const result = await session.execute('const reply = await tools.echo({ text: "hi" });\nreply.text + "!"');
    expect(result).toEqual({ status: 'completed', output: '', value: 'hi!' });
  });

  it('captures text() and console output in order, and returns structured values', async () => {
    const { session } = await open();
    const result = await session.execute(
      'text("first"); console.log("second", { n: 1 }, [2]); console.error("third"); text({ a: 1 }); ({ list: [1, "two", null], nested: { ok: true } })',
    );
    expect(result.output).toBe('first\nsecond {"n":1} [2]\nthird\n{"a":1}\n');
    expect(result.value).toEqual({ list: [1, 'two', null], nested: { ok: true } });
  });

  it('carries non-ASCII text across the membrane intact', async () => {
    const { session } = await open({ tools: [echoTool()] });
    const text = 'Grüße, 世界! 🎉 — “quotes”';
    const result = await session.execute(
      `text(${JSON.stringify(text)}); (await tools.echo({ text: ${JSON.stringify(text)} })).text`,
    );
    expect(result).toMatchObject({ status: 'completed', output: `${text}\n`, value: text });
  });

  it('completes with the value eval gives, whatever kind of statement comes last', async () => {
    // One program per kind of statement; program-source.test.ts compares many more with eval.
    const { session } = await open({ limits: { programs: 32 } });
    const programs = [
      'const ready = true;\nif (ready) { "yes" } else { "no" }',
      '"before"; if (false) { "yes" }',
      'try { JSON.parse("{") } catch (error) { error.name }',
      'try { "tried" } finally { "cleaned up" }',
      '"before"; { "block" }',
      'let total = 0; for (let i = 0; i < 4; i++) total += i',
      '"before"; for (const item of []) item',
      'for (const n of [1, 2, 3]) { n; if (n === 2) break }',
      'switch (2) { case 1: "one"; break; case 2: "two"; break; default: "other" }',
      'block: { "kept"; break block; "never" }',
      '"value"; let declared = 1; function named() {}',
      '"outer"; var result = (() => { "inner" })()',
      '"use strict"; (function () { return typeof this })()',
    ];
    const results: unknown[] = [];
    const expected: unknown[] = [];
    for (const source of programs) {
      const result = await session.execute(source);
      results.push([source, result.status, result.value]);
      const value: unknown = runInNewContext(source);
      expected.push([
        source,
        'completed',
        value === undefined ? undefined : JSON.parse(JSON.stringify(value)),
      ]);
    }
    expect(results).toEqual(expected);
    expect(await session.execute('const early = true;\nif (early) return "returned";\n"last"')).toMatchObject(
      {
        value: 'returned',
      },
    );
    expect(await session.execute('for (const n of [1, 2]) { if (n === 2) exit("exited"); n }')).toMatchObject(
      {
        value: 'exited',
      },
    );
  });

  it('completes a program that replaced Promise.prototype.then, with its value', async () => {
    const { session } = await open({ tools: [echoTool()] });
    const result = await session.execute(
      'Promise.prototype.then = function () { return "replaced"; };\nconst reply = await tools.echo({ text: "a" });\nreply.text + "!"',
    );
    expect(result).toEqual({ status: 'completed', output: '', value: 'a!' });
  });
}

/** What a program cannot reach or break: earlier programs' state, host objects, the guest API's builtins, the protocol. */
function describeIsolationCases({ open }: ConformanceContext): void {
  it('starts every program with fresh interpreter state', async () => {
    const { session } = await open();
    await session.execute('globalThis.leftover = 41; Object.prototype.polluted = true; 1');
    const next = await session.execute('[typeof globalThis.leftover, typeof ({}).polluted]');
    expect(next.value).toEqual(['undefined', 'undefined']);
  });

  it('makes its tool calls even after the program replaced the builtins the guest API uses', async () => {
    const { session } = await open({ tools: [echoTool()] });
    const result = await session.execute(
      'Array.prototype.push = null; Array.prototype.pop = null; Array.prototype.indexOf = null; Array.prototype.join = () => "x"; Map.prototype.get = () => undefined; Map.prototype.set = () => null; String = () => "s";\nconst replies = await Promise.all([tools.echo({ text: "a" }), tools.echo({ text: "b" })]);\nconsole.log("logged", 1);\nreplies',
    );
    expect(result).toMatchObject({
      status: 'completed',
      output: 'logged 1\n',
      value: [{ text: 'a' }, { text: 'b' }],
    });
    expect(JSON.stringify(result.value)).toContain('"a"');
    expect(JSON.stringify(result.value)).toContain('"b"');
  });

  it('exposes no host object: no process, require, fetch or bridge; JSON and prototypes can be replaced safely', async () => {
    const { session } = await open({ tools: [echoTool()] });
    const probe = await session.execute(`
      const names = Object.getOwnPropertyNames(globalThis);
      const ambient = ['process', 'require', 'fetch', 'bridge', 'module', 'Deno', 'Bun'].filter((name) => typeof globalThis[name] !== 'undefined');
      JSON.parse = () => { throw new Error('replaced'); };
      JSON.stringify = () => 'forged';
      Array.prototype.map = () => 'polluted';
      const reply = await tools.echo({ text: 'still works' });
      [ambient, names.filter((name) => /bridge|host|ghost/i.test(name)), reply.text]`);
    expect(probe).toMatchObject({ status: 'completed', value: [[], [], 'still works'] });
  });

  it('ignores output that looks like protocol frames: a forged call runs no tool', async () => {
    const log: unknown[] = [];
    const { session } = await open({ tools: [echoTool(log)] });
    const forged = JSON.stringify({
      type: 'tool_calls',
      programId: 'p1',
      calls: [{ callId: 'c9', name: 'echo', input: { text: 'forged' } }],
    });
    const result = await session.execute(
      `const frame = ${JSON.stringify(forged)}; const header = String.fromCharCode(0, 0, 0, frame.length); console.log(header + frame); text(header + frame); 'done'`,
    );
    expect(result.status).toBe('completed');
    expect(log).toEqual([]);
  });
}

/** How a program ends: early with exit() or finish(), on an error, or at once when nothing can settle. */
function describeProgramEndCases({ open }: ConformanceContext): void {
  it('completes early with exit() and finish(), even from inside a try block', async () => {
    const { session } = await open();
    expect(
      await session.execute('try { exit({ early: true }) } catch { text("never") }\ntext("not reached")'),
    ).toEqual({
      status: 'completed',
      output: '',
      value: { early: true },
    });
    expect((await session.execute('finish(7); 8')).value).toBe(7);
  });

  it('reports a runtime error at its line and column in the program as written', async () => {
    const { session } = await open();
    const first = await session.execute('null.property');
    expect(first.error).toMatch(/^TypeError: .*\(line 1, column (5|6)\)$/);
    const nested = await session.execute('"before";\nif (true) {\n  "inside";\n  null.property;\n}');
    expect(nested.error).toMatch(/^TypeError: .*\(line 4, column (7|8)\)$/);
  });

  it('ends at once a program waiting for a promise nothing can settle', async () => {
    const { session } = await open();
    const result = await session.execute('text("waiting"); await new Promise(() => {})');
    expect(result).toEqual({
      status: 'error',
      output: 'waiting\n',
      error:
        'The program is waiting for a promise that nothing can settle: no tool call is in flight, so it could never continue.',
    });
    expect((await session.execute('"next"')).value).toBe('next');
  });

  it('ends at once a program that throws a value whose description throws', async () => {
    const { session } = await open();
    const result = await session.execute(
      'throw { get message() { throw new Error("boom") }, get name() { throw new Error("boom") } }',
    );
    expect(result).toEqual({
      status: 'error',
      output: '',
      error:
        'The program ended, but its outcome could not be read: reading its error or value threw, or it replaced a builtin the guest API needs.',
    });
  });

  it('keeps a program waiting while a tool call is in flight, and exit() from its callback completes it', async () => {
    const gate = new Gate();
    const { session } = await open({ tools: [gateTool(gate)], observationWindowMs: 200 });
    const started = await session.execute(
      'tools.wait_for_gate({}).then((reply) => exit("exited after " + reply));\nawait new Promise(() => {})',
    );
    expect(started.status).toBe('still_working');
    gate.open();
    expect(await observeToEnd(session, await session.wait())).toEqual({
      status: 'completed',
      output: '',
      value: 'exited after opened',
    });
  });
}
