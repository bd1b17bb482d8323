import type { CodeModeSession } from '@ghost/code-mode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapDetection, bwrapUnavailable, openPythonSession } from './test-support/python-session.js';

// Each probe is a program in bubblewrap, asserted denied with the error the program sees. The
// interpreter's own blocks are defence in depth: the boundary is the sandbox and Node's
// permission model around the host (docs/decisions/2026-12-07-python-engine.md).
const blockedImports = [
  'js',
  'pyodide',
  'pyodide.ffi',
  'pyodide.code',
  'pyodide_js',
  '_pyodide',
  '_pyodide_core',
  'ctypes',
  'subprocess',
  'socket',
  'multiprocessing',
];

// These run in bubblewrap, the sandbox Python programs get. Where it cannot run (macOS, a kernel
// without user namespaces) the name says why; setup installs it and checks it runs on Linux.
describe.skipIf(!bwrapDetection.available)(
  `a Python program cannot reach the host${bwrapUnavailable}`,
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

    it('cannot import the JavaScript bridge, Pyodide, ctypes, subprocess or sockets', async () => {
      const probe = [
        'refused = {}',
        `for name in ${JSON.stringify(blockedImports)}:`,
        '    try:',
        '        __import__(name)',
        '        refused[name] = "imported"',
        '    except ImportError as error:',
        '        refused[name] = str(error)',
        'refused',
      ].join('\n');
      const result = await run(probe);
      expect(result.status).toBe('completed');
      const refused = result.value as Record<string, string>;
      for (const name of blockedImports) {
        // A submodule is refused at its package, the first import it needs.
        expect(refused[name]).toBe(
          `Module '${name.split('.')[0]}' is not available to programs in code mode.`,
        );
      }
    });

    it('has no os.system or os.popen, and the host file system is not there', async () => {
      expect((await run('import os\nos.system("id")')).error).toBe(
        "AttributeError: module 'os' has no attribute 'system' (line 2)",
      );
      expect((await run('import os\nos.popen("id")')).error).toBe(
        "AttributeError: module 'os' has no attribute 'popen' (line 2)",
      );
      expect((await run('open("/etc/passwd").read()')).error).toBe(
        "FileNotFoundError: [Errno 44] No such file or directory: '/etc/passwd' (line 1)",
      );
      // The interpreter's own file system is in memory: the host's directories are not mounted.
      const listing = await run('import os\nsorted(os.listdir("/"))');
      expect(listing.value).toEqual(['dev', 'home', 'lib', 'proc', 'tmp']);
    });

    it('through introspection reaches Pyodide, but its JavaScript objects cannot make code', async () => {
      // gc finds the module the import blocker hides, and to_js gives a JavaScript object; its
      // constructor's constructor is Function, which the host refuses to run.
      const probe = [
        'import gc',
        'ffi = next(o for o in gc.get_objects() if type(o).__name__ == "module" and o.__name__ == "pyodide.ffi")',
        'made = ffi.to_js({})',
        'made.constructor.constructor("return process")()',
      ].join('\n');
      const result = await run(probe);
      expect(result.status).toBe('error');
      expect(result.error).toMatch(/EvalError: Code generation from strings disallowed for this context/);
      // And `import js` by the finder itself gives the object the host offers: nothing.
      const js = await run(
        [
          'import gc',
          'finder = next(o for o in gc.get_objects() if type(o).__name__ == "JsFinder")',
          'sorted(finder.jsproxies)',
        ].join('\n'),
      );
      expect(js.value).toEqual(['js']);
      const globals = await run(
        [
          'import gc',
          'finder = next(o for o in gc.get_objects() if type(o).__name__ == "JsFinder")',
          'js = finder.jsproxies["js"]',
          '[name for name in ("process", "require", "globalThis", "fetch") if hasattr(js, name)]',
        ].join('\n'),
      );
      expect(globals).toMatchObject({ status: 'completed', value: [] });
    });
  },
);
