import { runInNewContext } from 'node:vm';
import { createRuntime, defineAgent, defineTool, type StreamEvent, type Tool, ToolError } from '@ghost/core';
import { ScriptedModel } from '@ghost/core/testing';
import { Type } from 'typebox';
import { afterEach, describe, expect, it } from 'vitest';
import { codeMode } from '../code-mode.js';
import {
  type CodeModeSessionOptions,
  leftoverEntries,
  type OpenedCodeModeSession,
  openCodeModeSession,
} from '../code-mode-session.js';
import type { CodeModePlacement, EngineV1, ProgramResult } from '../engine.js';
import { CodeModeSourceTooLargeError, CodeModeStateError } from '../errors.js';
import type { SandboxChoice } from '../sandbox-factory.js';
import { descendantProcesses } from './child-processes.js';

/** The options of {@link describeEngineConformance}. */
export interface EngineConformanceOptions {
  /** The engine under test. */
  readonly engine: EngineV1;
  /**
   * The sandbox to run it in: a registered name or a backend object. Default `'unrestricted'`.
   * Pass the backend itself (`bwrapSandbox`) when the test's working directory cannot import it.
   */
  readonly sandbox?: SandboxChoice;
  readonly placement?: CodeModePlacement;
}

/** A gate a tool waits on, so a test decides when a call finishes. */
class Gate {
  #open: () => void = () => {};
  readonly opened = new Promise<void>((resolve) => {
    this.#open = resolve;
  });
  open(): void {
    this.#open();
  }
}

/** The content of the last message the model's second call received: the first tool result. */
function lastToolContent(model: ScriptedModel): string {
  const message = model.calls[1]?.messages.at(-1);
  return message?.role === 'tool' ? message.content : '';
}

/** A tool that answers 'opened' once the test opens `gate`. */
function gateTool(gate: Gate): Tool {
  return defineTool({
    name: 'wait_for_gate',
    description: 'Waits for the test.',
    input: Type.Object({}),
    execute: async () => {
      await gate.opened;
      return 'opened';
    },
  });
}

/** A tool whose call never returns, so only the program's end can stop it. */
function foreverTool(): Tool {
  return defineTool({
    name: 'forever',
    description: 'Never returns.',
    input: Type.Object({}),
    execute: () => new Promise(() => {}),
  });
}

const delay = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/** Sends SIGKILL, unless the process has already ended. */
function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

function echoTool(log: unknown[] = []): Tool {
  return defineTool({
    name: 'echo',
    description: 'Returns its input.',
    input: Type.Object({ text: Type.String() }),
    execute: ({ text }) => {
      log.push(text);
      return { text };
    },
  });
}

/**
 * The engine conformance suite (vitest): everything code mode promises, run end to end against
 * one engine with real hosts, the real broker and the real tool pipeline. Every engine, ours and
 * third parties', calls it from a test file:
 *
 * @example
 * ```ts
 * import { describeEngineConformance } from '@ghost/code-mode/testing';
 * import { quickjsEngine } from '@ghost/engine-quickjs';
 *
 * describeEngineConformance({ engine: quickjsEngine });
 * ```
 */
export function describeEngineConformance(options: EngineConformanceOptions): void {
  const { engine } = options;
  const sandbox = options.sandbox ?? 'unrestricted';
  const sandboxName = typeof sandbox === 'string' ? sandbox : sandbox.name;
  const placement = options.placement ?? 'process';
  let opened: OpenedCodeModeSession[] = [];

  const open = async (session: Omit<CodeModeSessionOptions, 'engine'> = {}) => {
    const events: StreamEvent[] = [];
    const test = await openCodeModeSession({
      onEvent: (event) => events.push(event),
      engine,
      sandbox,
      placement,
      observationWindowMs: 10_000,
      ...session,
    });
    opened.push(test);
    return { ...test, events };
  };

  afterEach(async () => {
    for (const test of opened) await test.close();
    opened = [];
  });

  describe(`engine '${engine.name}' (${placement} placement, sandbox '${sandboxName}')`, () => {
    describe('the guest API', () => {
      it('brokers tool calls and returns the final expression as the value', async () => {
        const { session } = await open({ tools: [echoTool()] });
        const result = await session.execute(
          'const reply = await tools.echo({ text: "hi" });\nreply.text + "!"',
        );
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

      it('carries non-ASCII text across the membrane intact', async () => {
        const { session } = await open({ tools: [echoTool()] });
        const text = 'Grüße, 世界! 🎉 — “quotes”';
        const result = await session.execute(
          `text(${JSON.stringify(text)}); (await tools.echo({ text: ${JSON.stringify(text)} })).text`,
        );
        expect(result).toMatchObject({ status: 'completed', output: `${text}\n`, value: text });
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
        expect(
          await session.execute('const early = true;\nif (early) return "returned";\n"last"'),
        ).toMatchObject({
          value: 'returned',
        });
        expect(
          await session.execute('for (const n of [1, 2]) { if (n === 2) exit("exited"); n }'),
        ).toMatchObject({
          value: 'exited',
        });
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
        expect(await session.wait()).toEqual({
          status: 'completed',
          output: '',
          value: 'exited after opened',
        });
      });

      it('completes a program that replaced Promise.prototype.then, with its value', async () => {
        const { session } = await open({ tools: [echoTool()] });
        const result = await session.execute(
          'Promise.prototype.then = function () { return "replaced"; };\nconst reply = await tools.echo({ text: "a" });\nreply.text + "!"',
        );
        expect(result).toEqual({ status: 'completed', output: '', value: 'a!' });
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
    });

    describe('bad programs', () => {
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

      it.each([
        [
          'a cycle',
          'const value = { name: "loop" }; value.self = value; value',
          /refers to itself at \.self/,
        ],
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
        const result = await session.execute(
          'await tools.echo({ text: 1n }).catch((error) => error.message)',
        );
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
          expect.stringMatching(
            /^The arguments of tools\.echo is not JSON: its toJSON\(\) returned undefined/,
          ),
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

      it('refuses source over sourceBytes before starting anything', async () => {
        const { session } = await open({ limits: { sourceBytes: 100 } });
        await expect(session.execute(`// ${'x'.repeat(200)}`)).rejects.toThrow(CodeModeSourceTooLargeError);
        expect((await session.execute('1')).value).toBe(1);
      });

      it('truncates huge output, keeping the head and the tail and saying how much was cut', async () => {
        const { session } = await open({ limits: { outputBytes: 10_000 } });
        const result = await session.execute(
          'for (let i = 0; i < 5000; i++) console.log("line " + i); "done"',
        );
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

      it('survives a memory bomb: the program ends with a memory error, and the next program runs', async () => {
        const { session } = await open({ limits: { memoryBytes: 32 * 1024 * 1024 } });
        const result = await session.execute(
          'const hoard = []; for (;;) hoard.push(new Array(10000).fill(Math.random()))',
        );
        expect(result.status).toBe('error');
        expect(result.error).toMatch(/memory/i);
        expect((await session.execute('"alive"')).value).toBe('alive');
      });
    });

    describe('control operations', () => {
      it('returns still_working after the observation window, then wait returns only new output', async () => {
        const gate = new Gate();
        const waitTool = gateTool(gate);
        const { session } = await open({ tools: [waitTool], observationWindowMs: 150 });
        const first = await session.execute(
          'text("started"); const value = await tools.wait_for_gate({}); text("finished"); value',
        );
        expect(first).toEqual({ status: 'still_working', output: 'started\n' });
        const second = await session.wait();
        expect(second).toEqual({ status: 'still_working', output: '' });
        gate.open();
        const third = await session.wait();
        expect(third).toEqual({ status: 'completed', output: 'finished\n', value: 'opened' });
        await expect(session.wait()).rejects.toThrow(CodeModeStateError);
      });

      it('refuses wait and stop with nothing running', async () => {
        const { session } = await open();
        await expect(session.wait()).rejects.toThrow(/No program is running/);
        await expect(session.stop()).rejects.toThrow(CodeModeStateError);
      });

      it('refuses exec while a program is still working, and the old program survives', async () => {
        const gate = new Gate();
        const waitTool = gateTool(gate);
        const { session } = await open({ tools: [waitTool], observationWindowMs: 100 });
        expect((await session.execute('await tools.wait_for_gate({})')).status).toBe('still_working');
        await expect(session.execute('"second"')).rejects.toThrow(/still working/);
        gate.open();
        expect(await session.wait()).toEqual({ status: 'completed', output: '', value: 'opened' });
      });

      it('runs one control operation at a time: a concurrent one is refused without running', async () => {
        const log: unknown[] = [];
        const { session } = await open({ tools: [echoTool(log)] });
        const first = session.execute('await tools.echo({ text: "first" })');
        await expect(session.execute('await tools.echo({ text: "second" })')).rejects.toThrow(
          /one control operation at a time/,
        );
        await expect(session.wait()).rejects.toThrow(/one control operation at a time/);
        expect((await first).value).toEqual({ text: 'first' });
        expect(log).toEqual(['first']);
      });

      it('stop ends a program with a tool call in flight: its signal fires and the late result is dropped', async () => {
        const started = new Gate();
        const finish = new Gate();
        let wasAborted = false;
        const slow = defineTool({
          name: 'slow',
          description: 'Finishes when the test says so.',
          input: Type.Object({}),
          execute: async (_input, { signal }) => {
            signal.addEventListener('abort', () => {
              wasAborted = true;
            });
            started.open();
            await finish.opened;
            return 'late';
          },
        });
        const { session, events } = await open({ tools: [slow], observationWindowMs: 50 });
        expect(await session.execute('text("waiting"); await tools.slow({})')).toEqual({
          status: 'still_working',
          output: 'waiting\n',
        });
        await started.opened;
        expect(await session.stop()).toEqual({ status: 'terminated', output: '' });
        expect(wasAborted).toBe(true);
        finish.open();
        await delay(20);
        const stops = events.filter((event) => event.type === 'tool_stop');
        expect(stops).toHaveLength(1);
        expect(stops[0]?.data).toMatchObject({ status: 'error' });
        expect((await session.execute('"next"')).value).toBe('next');
      });

      it('ends a program at wallSeconds even when nobody observes it, and cleans up its host', async () => {
        const forever = foreverTool();
        const { session } = await open({
          tools: [forever],
          observationWindowMs: 50,
          limits: { wallSeconds: 0.4 },
          prewarm: false,
        });
        expect((await session.execute('await tools.forever({})')).status).toBe('still_working');
        await delay(900);
        expect(await descendantProcesses()).toEqual([]);
        const expired = await session.wait();
        expect(expired.status).toBe('error');
        expect(expired.error).toMatch(/time limit of 0\.4 s \(limits\.wallSeconds\)/);
      });

      it('counts wallSeconds from exec: wait does not extend it', async () => {
        const forever = foreverTool();
        const { session } = await open({
          tools: [forever],
          observationWindowMs: 200,
          limits: { wallSeconds: 0.5 },
        });
        // 200 ms windows against a 500 ms lifetime: had a wait restarted the clock, the third
        // observation would still find the program working.
        expect((await session.execute('await tools.forever({})')).status).toBe('still_working');
        expect((await session.wait()).status).toBe('still_working');
        const last = await session.wait();
        expect(last.status).toBe('error');
        expect(last.error).toMatch(/limits\.wallSeconds/);
      });

      it('refuses exec past limits.programs', async () => {
        const { session } = await open({ limits: { programs: 2 } });
        await session.execute('1');
        await session.execute('2');
        await expect(session.execute('3')).rejects.toThrow(/its 2 programs \(limits\.programs\)/);
      });
    });

    describe('hosts and cleanup', () => {
      // Killing the host from outside needs a host process; the thread placement has none (its
      // workers are threads of this process), so there the case is skipped and says why.
      it.skipIf(placement !== 'process')(
        `reports a host killed from outside, never runs the tool twice, and starts a fresh host next${placement === 'process' ? '' : ' (skipped: the thread placement has no host process to kill)'}`,
        async () => {
          const started = new Gate();
          // The call stays in flight until the test has killed the host, however long finding
          // the host takes on a loaded machine.
          const release = new Gate();
          let runs = 0;
          const counted = defineTool({
            name: 'counted',
            description: 'Counts its runs.',
            input: Type.Object({}),
            execute: async () => {
              runs += 1;
              started.open();
              await release.opened;
              return runs;
            },
          });
          const { session } = await open({ tools: [counted], prewarm: false, observationWindowMs: 5_000 });
          const observing = session.execute('await tools.counted({})');
          await started.opened;
          // Other short-lived children (an engine's start-up checks) may come and go meanwhile:
          // wait for the live ones, and let any that already ended be.
          let hosts = await descendantProcesses();
          for (let attempt = 0; hosts.length === 0 && attempt < 100; attempt += 1) {
            await delay(50);
            hosts = await descendantProcesses();
          }
          expect(hosts.length).toBeGreaterThan(0);
          for (const host of hosts) killQuietly(host.pid);
          const result = await observing;
          expect(result.status).toBe('error');
          expect(result.error).toMatch(/signal=SIGKILL/);
          release.open();
          await delay(400);
          expect(runs).toBe(1);
          expect((await session.execute('"fresh"')).value).toBe('fresh');
        },
      );

      it('close ends the running program, its host and the spare, and removes every workspace', async () => {
        const test = await open({
          tools: [foreverTool()],
          observationWindowMs: 50,
        });
        expect((await test.session.execute('await tools.forever({})')).status).toBe('still_working');
        if (placement === 'process') expect((await descendantProcesses()).length).toBeGreaterThan(0);
        await test.session.close();
        await test.session.close();
        expect(await descendantProcesses()).toEqual([]);
        expect(await leftoverEntries(test.workspaceRoot)).toEqual([]);
        await expect(test.session.execute('1')).rejects.toThrow(/closed/);
      });
    });

    describe('in an agent', () => {
      const runtime = () => createRuntime({ engines: [engine] });
      const lookup = defineTool({
        name: 'help_center_lookup',
        description: 'Find a support answer by topic.',
        input: Type.Object({ query: Type.String() }),
        execute: ({ query }) =>
          ({ 'refund policy': 'Refunds within 30 days.', 'shipping policy': 'Ships in 3 to 5 days.' })[
            query
          ] ?? 'No matching entry.',
      });
      const program = `const [refund, shipping] = await Promise.all([
  tools.help_center_lookup({ query: 'refund policy' }),
  tools.help_center_lookup({ query: 'shipping policy' }),
]);
text(refund + '\\n' + shipping);`;

      it('gives the model exec, wait, stop and the except tools, and the declarations', async () => {
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
        expect(request?.instructions).toContain('help_center_lookup(args: {');
        expect(request?.instructions).not.toContain('confirm(args');
      });

      it('streams brokered calls by name under their exec, and hides the control calls', async () => {
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
        expect(
          toolEvents.map((event) => [event.type, (event.data as { toolName: string }).toolName]),
        ).toEqual([
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
      });

      it('shares maxToolCalls between direct and brokered calls; control calls do not count', async () => {
        const model = new ScriptedModel([
          {
            toolCalls: [
              {
                name: 'exec',
                input: {
                  source:
                    'const settled = await Promise.allSettled([1, 2, 3, 4].map(() => tools.help_center_lookup({ query: "refund policy" })));\nsettled.map((each) => each.status)',
                },
              },
            ],
          },
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
      });

      it('runs a brokered exclusive tool without deadlocking behind exec', async () => {
        const exclusive = defineTool({
          name: 'exclusive_write',
          description: 'Writes alone.',
          input: Type.Object({}),
          exclusive: true,
          execute: () => 'written',
        });
        const model = new ScriptedModel([
          { toolCalls: [{ name: 'exec', input: { source: 'await tools.exclusive_write({})' } }] },
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
      });

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

      it('closes the session when the run is cancelled mid-program, leaving nothing running', async () => {
        const forever = foreverTool();
        const model = new ScriptedModel([
          { toolCalls: [{ name: 'exec', input: { source: 'await tools.forever({})' } }] },
        ]);
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
      });
    });

    // ---- Issue 17, parent side: what a program sends back, and where it may run. ----
    // One block, appended; its imports are dynamic so the rest of the file stays as it was.
    describe('what a program sends back, and where it may run', () => {
      const sizedTool = defineTool({
        name: 'sized',
        description: 'Returns a string of the size asked for.',
        input: Type.Object({ bytes: Type.Number() }),
        execute: ({ bytes }) => 'r'.repeat(bytes),
      });

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

      it.skipIf(sandboxName === 'unrestricted')(
        `refuses placement 'thread' with sandbox '${sandboxName}' through open(), openCodeModeSession and codeMode()${sandboxName === 'unrestricted' ? " (skipped: 'unrestricted' is the one sandbox the thread placement may name)" : ''}`,
        async () => {
          const { createSandboxFactory } = await import('../sandbox-factory.js');
          const { resolveCodeModeLimits } = await import('../limits.js');
          const { ToolBroker } = await import('../tool-broker.js');
          const { ToolCatalog } = await import('../tool-catalog.js');
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
    });
  });
}
