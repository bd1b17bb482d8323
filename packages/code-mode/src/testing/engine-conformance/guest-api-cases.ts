import { runInNewContext } from 'node:vm';
import { defineTool, ToolError } from '@ghost/core';
import { Type } from 'typebox';
import { describe, expect } from 'vitest';
import { inLanguage, itWithPrograms } from './case-programs.js';
import type { ConformanceContext } from './conformance-context.js';
import { delay, echoTool, Gate, gateTool, observeToEnd } from './conformance-fixtures.js';

/**
 * The conformance cases for the guest API: tool calls, values, output, console, errors thrown by tools and the program, `exit` and `finish`.
 * Registers them under the current `describe`; `describeEngineConformance` runs it with the others.
 */
export function describeGuestApiCases(context: ConformanceContext): void {
  describe('the guest API', () => {
    describeToolCallCases(context);
    describeToolFailureCases(context);
    describeValueAndOutputCases(context);
    describeCompletionValueCases(context);
    describeIsolationCases(context);
    describeHostObjectCases(context);
    describeProgramEndCases(context);
    describeWaitingProgramCases(context);
  });
}

/** Tool calls from a program: concurrent, by name, and in parallel. */
function describeToolCallCases({ engine, open }: ConformanceContext): void {
  const itWith = itWithPrograms(engine.language);
  itWith(
    'runs Promise.all calls concurrently in the parent, results in order',
    {
      javascript: 'await Promise.all([1, 2, 3, 4].map((n) => tools.slow({ n })))',
      python: 'import asyncio\nawait asyncio.gather(*(tools.slow(n=n) for n in [1, 2, 3, 4]))',
    },
    async (source) => {
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
      const result = await session.execute(source);
      expect(result.value).toEqual([2, 4, 6, 8]);
      expect(peak).toBe(4);
    },
  );

  itWith(
    'calls tools by name with tools.call and in parallel with tools.parallel',
    {
      javascript: `
      const a = await tools.call('help-center-lookup', { topic: 'a' });
      const b = await tools.call('tools.help_center_lookup', { topic: 'b' });
      const [c, d] = await tools.parallel(() => tools.help_center_lookup({ topic: 'c' }), () => tools.help_center_lookup({ topic: 'd' }));
      [a, b, c, d, ALL_TOOLS.map((tool) => [tool.name, tool.toolName, tool.description])]`,
      python: `a = await tools.call("help-center-lookup", {"topic": "a"})
b = await tools.call("tools.help_center_lookup", {"topic": "b"})
c, d = await tools.parallel(
    lambda: tools.help_center_lookup(topic="c"),
    lambda: tools.help_center_lookup(topic="d"),
)
[a, b, c, d, [[tool["name"], tool["toolName"], tool["description"]] for tool in ALL_TOOLS]]`,
    },
    async (source) => {
      const lookup = defineTool({
        name: 'help-center-lookup',
        description: 'Looks a topic up.',
        input: Type.Object({ topic: Type.String() }),
        execute: ({ topic }) => `entry for ${topic}`,
      });
      const { session } = await open({ tools: [lookup] });
      const result = await session.execute(source);
      expect(result.value).toEqual([
        'entry for a',
        'entry for b',
        'entry for c',
        'entry for d',
        [['help_center_lookup', 'help-center-lookup', 'Looks a topic up.']],
      ]);
    },
  );
}

/** Tool calls that fail, and calls cancelled when their program ends. */
function describeToolFailureCases({ engine, open }: ConformanceContext): void {
  const itWith = itWithPrograms(engine.language);
  itWith(
    'turns a tool failure into a rejection the program can catch',
    {
      javascript: {
        caught:
          'try { await tools.failing({}) } catch (error) { text("caught: " + error.message) }\nawait tools.nope({}).catch((error) => error.message)',
        invalid: 'await tools.echo({ text: 42 })',
      },
      python: {
        caught: `try:
    await tools.failing()
except ToolError as error:
    text("caught: " + str(error))
try:
    await tools.nope()
except ToolError as error:
    unknown = str(error)
unknown`,
        invalid: 'await tools.echo(text=42)',
      },
    },
    async ({ caught: caughtSource, invalid: invalidSource }) => {
      const failing = defineTool({
        name: 'failing',
        description: 'Always fails.',
        input: Type.Object({}),
        execute: () => {
          throw new ToolError('No such order: ask for the order number.');
        },
      });
      const { session } = await open({ tools: [failing, echoTool()] });
      const caught = await session.execute(caughtSource);
      expect(caught.output).toBe('caught: No such order: ask for the order number.\n');
      expect(caught.value).toMatch(/^Unknown tool 'nope'\. Available tools: failing, echo\.$/);
      const invalid = await session.execute(invalidSource);
      expect(invalid.status).toBe('error');
      expect(invalid.error).toMatch(/Invalid tool input: \/text/);
    },
  );

  itWith(
    'cancels tool calls a program leaves unawaited when it ends',
    {
      javascript: 'tools.hang({});\nawait null;\n1',
      python: 'import asyncio\nasyncio.ensure_future(tools.hang())\nawait asyncio.sleep(0)\n1',
    },
    async (source) => {
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
      const result = await session.execute(source);
      expect(result).toMatchObject({ status: 'completed', value: 1 });
      await delay(300);
      expect(isStarted ? isAborted : true).toBe(true);
    },
  );
}

/** What a program gives back: its value, its text and console output, intact. */
function describeValueAndOutputCases({ engine, open }: ConformanceContext): void {
  const itWith = itWithPrograms(engine.language);
  itWith(
    'brokers tool calls and returns the final expression as the value',
    {
      javascript: 'const reply = await tools.echo({ text: "hi" });\nreply.text + "!"',
      python: 'reply = await tools.echo(text="hi")\nreply["text"] + "!"',
    },
    async (source) => {
      const { session } = await open({ tools: [echoTool()] });
      const result = await session.execute(source);
      expect(result).toEqual({ status: 'completed', output: '', value: 'hi!' });
    },
  );

  itWith(
    'captures text() and console output in order, and returns structured values',
    {
      javascript:
        'text("first"); console.log("second", { n: 1 }, [2]); console.error("third"); text({ a: 1 }); ({ list: [1, "two", null], nested: { ok: true } })',
      python: `import sys
text("first")
print("second", {"n": 1}, [2])
print("third", file=sys.stderr)
text({"a": 1})
{"list": [1, "two", None], "nested": {"ok": True}}`,
    },
    async (source) => {
      const { session } = await open();
      const result = await session.execute(source);
      // Each language prints a value its own way; text() writes JSON in both.
      expect(result.output).toBe(
        inLanguage(engine.language, {
          javascript: 'first\nsecond {"n":1} [2]\nthird\n{"a":1}\n',
          python: 'first\nsecond {\'n\': 1} [2]\nthird\n{"a":1}\n',
        }),
      );
      expect(result.value).toEqual({ list: [1, 'two', null], nested: { ok: true } });
    },
  );

  const text = 'Grüße, 世界! 🎉 — “quotes”';
  itWith(
    'carries non-ASCII text across the membrane intact',
    {
      javascript: `text(${JSON.stringify(text)}); (await tools.echo({ text: ${JSON.stringify(text)} })).text`,
      // A JSON string is a Python string literal too.
      python: `text(${JSON.stringify(text)})\n(await tools.echo(text=${JSON.stringify(text)}))["text"]`,
    },
    async (source) => {
      const { session } = await open({ tools: [echoTool()] });
      const result = await session.execute(source);
      expect(result).toMatchObject({ status: 'completed', output: `${text}\n`, value: text });
    },
  );
}

/** The value of a program whose last statement is not an expression, and of one that replaced `then`. */
function describeCompletionValueCases({ engine, open }: ConformanceContext): void {
  const itWith = itWithPrograms(engine.language);
  itWith(
    'completes with the value eval gives, whatever kind of statement comes last',
    {
      // One program per kind of statement; program-source.test.ts compares many more with eval.
      javascript: {
        ifElse: 'const ready = true;\nif (ready) { "yes" } else { "no" }',
        ifFalse: '"before"; if (false) { "yes" }',
        tryCatch: 'try { JSON.parse("{") } catch (error) { error.name }',
        tryFinally: 'try { "tried" } finally { "cleaned up" }',
        block: '"before"; { "block" }',
        forLoop: 'let total = 0; for (let i = 0; i < 4; i++) total += i',
        forOfEmpty: '"before"; for (const item of []) item',
        forOfBreak: 'for (const n of [1, 2, 3]) { n; if (n === 2) break }',
        switchCase: 'switch (2) { case 1: "one"; break; case 2: "two"; break; default: "other" }',
        labelled: 'block: { "kept"; break block; "never" }',
        declarations: '"value"; let declared = 1; function named() {}',
        arrowCall: '"outer"; var result = (() => { "inner" })()',
        useStrict: '"use strict"; (function () { return typeof this })()',
        returned: 'const early = true;\nif (early) return "returned";\n"last"',
        exited: 'for (const n of [1, 2]) { if (n === 2) exit("exited"); n }',
      },
      javascriptOnly: "compares each program's value with JavaScript's eval",
    },
    async ({ returned, exited, ...compared }) => {
      const { session } = await open({ limits: { programs: 32 } });
      const results: unknown[] = [];
      const expected: unknown[] = [];
      for (const source of Object.values(compared)) {
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
      expect(await session.execute(returned)).toMatchObject({
        value: 'returned',
      });
      expect(await session.execute(exited)).toMatchObject({
        value: 'exited',
      });
    },
  );

  itWith(
    'completes a program that replaced Promise.prototype.then, with its value',
    {
      javascript:
        'Promise.prototype.then = function () { return "replaced"; };\nconst reply = await tools.echo({ text: "a" });\nreply.text + "!"',
      javascriptOnly: 'replaces Promise.prototype.then',
    },
    async (source) => {
      const { session } = await open({ tools: [echoTool()] });
      const result = await session.execute(source);
      expect(result).toEqual({ status: 'completed', output: '', value: 'a!' });
    },
  );
}
/** What a program cannot break: the next program's state, the guest API's workings. */
function describeIsolationCases({ engine, open }: ConformanceContext): void {
  const itWith = itWithPrograms(engine.language);
  itWith(
    'starts every program with fresh interpreter state',
    {
      javascript: {
        first: 'globalThis.leftover = 41; Object.prototype.polluted = true; 1',
        next: '[typeof globalThis.leftover, typeof ({}).polluted]',
      },
      // Modules are Python's shared state: a program may change them, and the next finds them new.
      python: {
        first:
          'import asyncio, builtins, json\nbuiltins.leftover = 41\njson.polluted = True\nasyncio.gather = None\n1',
        next: 'import asyncio, builtins, json\n[hasattr(builtins, "leftover"), hasattr(json, "polluted"), asyncio.gather is None]',
      },
    },
    async ({ first, next }) => {
      const { session } = await open();
      await session.execute(first);
      const result = await session.execute(next);
      expect(result.value).toEqual(
        inLanguage(engine.language, {
          javascript: ['undefined', 'undefined'],
          python: [false, false, false],
        }),
      );
    },
  );

  itWith(
    'makes its tool calls even after the program replaced the builtins the guest API uses',
    {
      javascript:
        'Array.prototype.push = null; Array.prototype.pop = null; Array.prototype.indexOf = null; Array.prototype.join = () => "x"; Map.prototype.get = () => undefined; Map.prototype.set = () => null; String = () => "s";\nconst replies = await Promise.all([tools.echo({ text: "a" }), tools.echo({ text: "b" })]);\nconsole.log("logged", 1);\nreplies',
      // Python's builtin types cannot be changed; a program's own names and asyncio's can.
      python: `import asyncio
asyncio.gather = asyncio.ensure_future = asyncio.wait = None
str = len = isinstance = callable = list = dict = tuple = None
replies = await tools.parallel(lambda: tools.echo(text="a"), lambda: tools.echo(text="b"))
print("logged", 1)
replies`,
    },
    async (source) => {
      const { session } = await open({ tools: [echoTool()] });
      const result = await session.execute(source);
      expect(result).toMatchObject({
        status: 'completed',
        output: 'logged 1\n',
        value: [{ text: 'a' }, { text: 'b' }],
      });
      expect(JSON.stringify(result.value)).toContain('"a"');
      expect(JSON.stringify(result.value)).toContain('"b"');
    },
  );
}

/** What a program cannot reach: host objects, the protocol. */
function describeHostObjectCases({ engine, open }: ConformanceContext): void {
  const itWith = itWithPrograms(engine.language);
  itWith(
    'exposes no host object: no process, require, fetch or bridge; JSON and prototypes can be replaced safely',
    {
      javascript: `
      const names = Object.getOwnPropertyNames(globalThis);
      const ambient = ['process', 'require', 'fetch', 'bridge', 'module', 'Deno', 'Bun'].filter((name) => typeof globalThis[name] !== 'undefined');
      JSON.parse = () => { throw new Error('replaced'); };
      JSON.stringify = () => 'forged';
      Array.prototype.map = () => 'polluted';
      const reply = await tools.echo({ text: 'still works' });
      [ambient, names.filter((name) => /bridge|host|ghost/i.test(name)), reply.text]`,
      // The bridge to the host's JavaScript is Pyodide's modules; json is what a program may replace.
      python: `import importlib
import json
import re

ambient = []
for name in ["js", "pyodide_js", "pyodide.ffi", "_pyodide", "pyodide"]:
    try:
        importlib.import_module(name)
        ambient.append(name)
    except ImportError:
        pass
names = [name for name in list(globals()) + dir(__builtins__) if re.search("bridge|host|ghost", name, re.IGNORECASE)]
json.loads = lambda *args, **kwargs: "replaced"
json.dumps = lambda *args, **kwargs: "forged"
reply = await tools.echo(text="still works")
[ambient, names, reply["text"]]`,
    },
    async (source) => {
      const { session } = await open({ tools: [echoTool()] });
      const probe = await session.execute(source);
      expect(probe).toMatchObject({ status: 'completed', value: [[], [], 'still works'] });
    },
  );

  const forged = JSON.stringify({
    type: 'tool_calls',
    programId: 'p1',
    calls: [{ callId: 'c9', name: 'echo', input: { text: 'forged' } }],
  });
  itWith(
    'ignores output that looks like protocol frames: a forged call runs no tool',
    {
      javascript: `const frame = ${JSON.stringify(forged)}; const header = String.fromCharCode(0, 0, 0, frame.length); console.log(header + frame); text(header + frame); 'done'`,
      python: `frame = ${JSON.stringify(forged)}\nheader = "\\0\\0\\0" + chr(len(frame))\nprint(header + frame)\ntext(header + frame)\n"done"`,
    },
    async (source) => {
      const log: unknown[] = [];
      const { session } = await open({ tools: [echoTool(log)] });
      const result = await session.execute(source);
      expect(result.status).toBe('completed');
      expect(log).toEqual([]);
    },
  );
}

/** How a program ends early: with exit() or finish(), or on an error. */
function describeProgramEndCases({ engine, open }: ConformanceContext): void {
  const itWith = itWithPrograms(engine.language);
  itWith(
    'completes early with exit() and finish(), even from inside a try block',
    {
      javascript: {
        exited: 'try { exit({ early: true }) } catch { text("never") }\ntext("not reached")',
        finished: 'finish(7); 8',
      },
      python: {
        exited: 'try:\n    exit({"early": True})\nexcept Exception:\n    text("never")\ntext("not reached")',
        finished: 'finish(7)\n8',
      },
    },
    async ({ exited, finished }) => {
      const { session } = await open();
      expect(await session.execute(exited)).toEqual({
        status: 'completed',
        output: '',
        value: { early: true },
      });
      expect((await session.execute(finished)).value).toBe(7);
    },
  );

  itWith(
    'reports a runtime error at its line and column in the program as written',
    {
      javascript: {
        first: 'null.property',
        nested: '"before";\nif (true) {\n  "inside";\n  null.property;\n}',
      },
      python: { first: 'None.property', nested: '"before"\nif True:\n    "inside"\n    None.property\n' },
    },
    async ({ first: firstSource, nested: nestedSource }) => {
      const { session } = await open();
      const first = await session.execute(firstSource);
      // Python's errors say their line, and may say their column.
      expect(first.error).toMatch(
        inLanguage(engine.language, {
          javascript: /^TypeError: .*\(line 1, column (5|6)\)$/,
          python: /^AttributeError: .*\(line 1(, column 1)?\)$/,
        }),
      );
      const nested = await session.execute(nestedSource);
      expect(nested.error).toMatch(
        inLanguage(engine.language, {
          javascript: /^TypeError: .*\(line 4, column (7|8)\)$/,
          python: /^AttributeError: .*\(line 4(, column 5)?\)$/,
        }),
      );
    },
  );
}

/** How a program ends that cannot go on: waiting for nothing, or its error unreadable; and one waiting for a tool. */
function describeWaitingProgramCases({ engine, open }: ConformanceContext): void {
  const itWith = itWithPrograms(engine.language);
  itWith(
    'ends at once a program waiting for a promise nothing can settle',
    {
      javascript: 'text("waiting"); await new Promise(() => {})',
      python: 'import asyncio\ntext("waiting")\nawait asyncio.Event().wait()',
    },
    async (source) => {
      const { session } = await open();
      const result = await session.execute(source);
      expect(result).toEqual({
        status: 'error',
        output: 'waiting\n',
        error:
          'The program is waiting for a promise that nothing can settle: no tool call is in flight, so it could never continue.',
      });
      expect((await session.execute('"next"')).value).toBe('next');
    },
  );

  itWith(
    'ends at once a program that throws a value whose description throws',
    {
      javascript:
        'throw { get message() { throw new Error("boom") }, get name() { throw new Error("boom") } }',
      python: `class Unreadable(Exception):
    def __str__(self):
        raise RuntimeError("boom")

    def __repr__(self):
        raise RuntimeError("boom")

raise Unreadable()`,
    },
    async (source) => {
      const { session } = await open();
      const result = await session.execute(source);
      expect(result).toEqual({
        status: 'error',
        output: '',
        error:
          'The program ended, but its outcome could not be read: reading its error or value threw, or it replaced a builtin the guest API needs.',
      });
    },
  );

  itWith(
    'keeps a program waiting while a tool call is in flight, and exit() from its callback completes it',
    {
      javascript:
        'tools.wait_for_gate({}).then((reply) => exit("exited after " + reply));\nawait new Promise(() => {})',
      python: `import asyncio

async def exit_when_opened():
    reply = await tools.wait_for_gate()
    exit("exited after " + reply)

asyncio.ensure_future(exit_when_opened())
await asyncio.Event().wait()`,
    },
    async (source) => {
      const gate = new Gate();
      const { session } = await open({ tools: [gateTool(gate)], observationWindowMs: 200 });
      const started = await session.execute(source);
      expect(started.status).toBe('still_working');
      gate.open();
      expect(await observeToEnd(session, await session.wait())).toEqual({
        status: 'completed',
        output: '',
        value: 'exited after opened',
      });
    },
  );
}
