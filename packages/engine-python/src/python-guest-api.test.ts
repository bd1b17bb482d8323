import type { CodeModeSession } from '@ghost/code-mode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapDetection, bwrapUnavailable, openPythonSession } from './test-support/python-session.js';

// Python programs in bubblewrap, one session whose spare hosts serve the programs in turn.
// Host starts take seconds on a busy machine, hence the long timeout.
// Skipped only where bubblewrap cannot run (macOS, a kernel without user namespaces), as its name
// says; setup installs it and checks it runs on Linux.
describe.skipIf(!bwrapDetection.available)(
  `the Python guest API${bwrapUnavailable}`,
  { timeout: 60_000 },
  () => {
    let session: CodeModeSession;
    let close: (() => Promise<void>) | undefined;
    beforeAll(async () => {
      ({ session, close } = await openPythonSession({ limits: { programs: 100 } }));
    }, 120_000);
    afterAll(async () => {
      await close?.();
    });
    const run = (source: string) => session.execute(source);

    it('calls a tool with keyword arguments, prints, and gives the last expression as the value', async () => {
      const result = await run('print("looking")\nfound = await tools.echo(text="hi")\nfound["text"] * 2');
      expect(result).toEqual({ status: 'completed', output: 'looking\n', value: 'hihi' });
    });

    it('takes one dict as the input, calls by name, and reaches a keyword-named tool as tools.import_', async () => {
      const result = await run(
        [
          'a = await tools.echo({"text": "dict"})',
          'b = await tools.call("echo", {"text": "by name"})',
          'c = await tools.call("tools.echo", {"text": "dotted"})',
          'd = await tools.import_(id=7)',
          'e = await tools.call("import", {"id": 8})',
          '[a, b, c, d, e]',
        ].join('\n'),
      );
      expect(result.value).toEqual([
        { text: 'dict' },
        { text: 'by name' },
        { text: 'dotted' },
        { imported: 7 },
        { imported: 8 },
      ]);
    });

    it('fans out with tools.parallel and asyncio.gather, results in order', async () => {
      const result = await run(
        [
          'import asyncio',
          'first = await tools.parallel(lambda: tools.echo(text="a"), tools.echo(text="b"))',
          'second = await tools.parallel([lambda: tools.echo(text="c")])',
          'third = await asyncio.gather(*(tools.echo(text=str(n)) for n in range(20)))',
          '[first, second, [each["text"] for each in third]]',
        ].join('\n'),
      );
      expect(result.value).toEqual([
        [{ text: 'a' }, { text: 'b' }],
        [{ text: 'c' }],
        Array.from({ length: 20 }, (_, n) => String(n)),
      ]);
    });

    it("raises ToolError with the tool's message, for a failing tool and an unknown one", async () => {
      const result = await run(
        [
          'caught = []',
          'try:',
          '    await tools.failing()',
          'except ToolError as error:',
          '    caught.append(str(error))',
          'try:',
          '    await tools.nope(x=1)',
          'except ToolError as error:',
          '    caught.append(str(error))',
          'caught',
        ].join('\n'),
      );
      expect(result.status).toBe('completed');
      const [failed, unknown] = result.value as string[];
      expect(failed).toContain('the warehouse is closed');
      expect(unknown).toBe("Unknown tool 'nope'. Available tools: echo, failing, import_.");
    });

    it('an uncaught ToolError ends the program with its message and line', async () => {
      const result = await run('x = 1\nawait tools.failing()');
      expect(result.status).toBe('error');
      expect(result.error).toMatch(/^ToolError: .*the warehouse is closed.* \(line 2\)$/);
    });

    it('finish(value) ends the program at once, through `except Exception`', async () => {
      const result = await run(
        [
          'try:',
          '    print("before")',
          '    finish({"done": True})',
          'except Exception:',
          '    pass',
          'print("after")',
        ].join('\n'),
      );
      expect(result).toEqual({ status: 'completed', output: 'before\n', value: { done: true } });
      expect(await run('exit(3)\n4')).toEqual({ status: 'completed', output: '', value: 3 });
      // Nothing the program prints once it has finished is seen, as in JavaScript.
      expect(await run('try:\n    finish(1)\nfinally:\n    print("after")')).toEqual({
        status: 'completed',
        output: '',
        value: 1,
      });
    });

    it('text() writes strings as they are and anything else as one line of JSON; ALL_TOOLS lists the tools', async () => {
      const result = await run('text("plain")\ntext({"a": [1, 2]})\n[t["name"] for t in ALL_TOOLS]');
      expect(result).toEqual({
        status: 'completed',
        output: 'plain\n{"a":[1,2]}\n',
        value: ['echo', 'failing', 'import_'],
      });
    });

    it('a value that is not JSON gives a clear error, as tool arguments do', async () => {
      const value = await run('{"tags": {1, 2}}');
      expect(value).toMatchObject({
        status: 'error',
        error:
          "TypeError: The program's value is not JSON: a set at ['tags']; use dict, list, str, int, float, bool or None.",
      });
      const argument = await run('await tools.echo(text=object())');
      expect(argument.error).toContain("The arguments of tools.echo is not JSON: an object at ['text']");
    });

    it('reports a syntax error with its line, and a program with no value completes with none', async () => {
      const broken = await run('x = 1\nif x\n  pass');
      expect(broken.status).toBe('error');
      expect(broken.error).toMatch(/^SyntaxError: .*\(line 2\)$/);
      expect(await run('x = 1')).toEqual({ status: 'completed', output: '' });
    });

    it('waits for asyncio.sleep, and each program starts from fresh globals', async () => {
      const slept = await run('import asyncio\nawait asyncio.sleep(0.05)\nleftover = 1\n"slept"');
      expect(slept.value).toBe('slept');
      const fresh = await run('"leftover" in globals()');
      expect(fresh.value).toBe(false);
    });
  },
);
