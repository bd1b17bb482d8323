import { codeMode, openCodeModeSession } from '@ghost/code-mode';
import { describeEngineConformance } from '@ghost/code-mode/testing';
import { createRuntime, defineAgent, defineTool, ToolError } from '@ghost/core';
import { ScriptedModel } from '@ghost/core/testing';
import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import {
  isolatedVmHereMajor,
  isolatedVmHereProblem,
  loadIsolatedVmHere,
  needingIsolatedVm,
  v8EngineHere,
} from './test-support/isolated-vm-here.js';
import { v8Engine } from './v8-engine.js';

/**
 * What a 1 GiB array under a 32 MiB limit does: isolated-vm 5.x lets the allocation through to a
 * V8 fatal error, which aborts the host; 7.x refuses it as over the heap limit and disposes of the
 * isolate alone.
 */
const catastropheOutcome =
  isolatedVmHereMajor < 7
    ? /host process ended unexpectedly \(signal=SIGABRT/
    : /used more than its memory limit of 33554432 bytes \(limits\.memoryBytes\)/;
const catastropheTitle =
  isolatedVmHereMajor < 7
    ? 'a catastrophic V8 out-of-memory error aborts the host'
    : 'an allocation that aborts a host on isolated-vm 5 is refused as over the memory limit on isolated-vm 7';

describe.skipIf(isolatedVmHereProblem !== undefined)(needingIsolatedVm('the V8 engine'), () => {
  describeEngineConformance({ engine: v8EngineHere });

  const echo = defineTool({
    name: 'echo',
    description: 'Returns its input.',
    input: Type.Object({ text: Type.String() }),
    execute: ({ text }) => ({ text }),
  });

  const failing = defineTool({
    name: 'failing',
    description: 'Always fails.',
    input: Type.Object({}),
    execute: () => {
      throw new ToolError('refused by the host');
    },
  });

  async function withSession<Result>(
    work: (execute: (source: string) => ReturnType<typeof run>) => Promise<Result>,
    limits: { memoryBytes?: number } = {},
  ): Promise<Result> {
    const opened = await openCodeModeSession({
      engine: v8EngineHere,
      sandbox: 'unrestricted',
      tools: [echo, failing],
      limits,
    });
    try {
      return await work((source) => run(opened.session, source));
    } finally {
      await opened.close();
    }
  }

  function run(session: Awaited<ReturnType<typeof openCodeModeSession>>['session'], source: string) {
    return session.execute(source);
  }

  /** The global names of a bare isolated-vm context, as the guest's are compared with them. */
  async function bareContextGlobals(): Promise<string[]> {
    const ivm = loadIsolatedVmHere();
    const isolate = new ivm.Isolate({ memoryLimit: 8 });
    try {
      const context = await isolate.createContext();
      return JSON.parse(
        await context.eval('JSON.stringify(Object.getOwnPropertyNames(globalThis))'),
      ) as string[];
    } finally {
      isolate.dispose();
    }
  }

  describe('the V8 membrane: no live reference reaches the guest', () => {
    it('adds only the code-mode globals to a bare V8 context, and removes WebAssembly and SharedArrayBuffer', async () => {
      const bare = await bareContextGlobals();
      const names = await withSession(
        async (execute) => (await execute('Object.getOwnPropertyNames(globalThis)')).value,
      );
      const expected = [...bare.filter((name) => !['WebAssembly', 'SharedArrayBuffer'].includes(name))];
      for (const name of ['tools', 'ALL_TOOLS', 'text', 'exit', 'finish']) expected.push(name);
      expect([...(names as string[])].sort()).toEqual([...new Set(expected)].sort());
    });

    it('finds no host object anywhere reachable from the global: every function is the guest’s own', async () => {
      const result = await withSession((execute) =>
        execute(`
          const seen = new Set();
          const queue = [globalThis];
          const suspicious = [];
          // The members of isolated-vm's Reference, ExternalCopy and Isolate.
          const hostMembers = ['derefInto', 'copyInto', 'applySync', 'applyIgnored', 'applySyncPromise', 'getSync', 'setIgnored', 'compileScript', 'createContext'];
          while (queue.length > 0) {
            const value = queue.shift();
            if ((typeof value !== 'object' && typeof value !== 'function') || value === null || seen.has(value)) continue;
            seen.add(value);
            for (const key of Reflect.ownKeys(value)) {
              if (hostMembers.includes(key)) suspicious.push(String(key));
              const descriptor = Object.getOwnPropertyDescriptor(value, key);
              for (const part of [descriptor.value, descriptor.get, descriptor.set]) queue.push(part);
            }
            queue.push(Object.getPrototypeOf(value));
            // Every function reachable is made by this context's own Function.
            if (typeof value === 'function' && value !== Function.prototype && !(value instanceof Function)) suspicious.push('foreign function ' + value.name);
            if (typeof value === 'object' && /Reference|ExternalCopy|Callback|Isolate/.test(Object.prototype.toString.call(value))) suspicious.push(Object.prototype.toString.call(value));
          }
          [seen.size > 500, suspicious]`),
      );
      expect(result).toMatchObject({ status: 'completed', value: [true, []] });
    });

    it('constructor.constructor reaches only the guest’s own global, with nothing of the host on it', async () => {
      const result = await withSession((execute) =>
        execute(`
          const viaTools = tools.echo.constructor('return typeof process + "," + typeof require + "," + typeof globalThis.tools')();
          const viaError = await tools.failing({}).catch((error) => error.constructor.constructor('return typeof process + "," + (this === globalThis)')());
          const viaPromise = tools.echo({ text: 'a' }).constructor.constructor('return typeof module')();
          [viaTools, viaError, viaPromise]`),
      );
      expect(result).toMatchObject({
        status: 'completed',
        value: ['undefined,undefined,object', 'undefined,true', 'undefined'],
      });
    });

    it('turns a host error into a plain guest Error carrying only its message', async () => {
      const result = await withSession((execute) =>
        execute(`
          const error = await tools.failing({}).catch((caught) => caught);
          [error instanceof Error, Object.getPrototypeOf(error) === Error.prototype, error.message, Object.keys(error), typeof error.cause]`),
      );
      expect(result.value).toEqual([true, true, 'refused by the host', [], 'undefined']);
    });

    it('keeps tool calls working when the program replaces JSON and pollutes Object.prototype', async () => {
      const result = await withSession((execute) =>
        execute(`
          JSON.parse = () => { throw new Error('replaced'); };
          JSON.stringify = () => 'forged';
          Object.prototype.resolve = () => { throw new Error('polluted'); };
          Object.defineProperty(Object.prototype, 'reject', { set() { throw new Error('polluted setter'); }, configurable: true });
          Object.defineProperty(Object.prototype, '1', { set() { throw new Error('polluted index'); }, configurable: true });
          const reply = await tools.echo({ text: 'still works' });
          const failure = await tools.failing({}).catch((error) => error.message);
          [reply.text, failure]`),
      );
      expect(result).toMatchObject({ status: 'completed', value: ['still works', 'refused by the host'] });
    });

    it.each([
      [
        'throws an object whose getters throw',
        'throw { get message() { throw new Error("boom") }, get name() { throw new Error("boom") } }',
        /outcome could not be read/,
      ],
      [
        'awaits a promise nothing settles',
        'await new Promise(() => {})',
        /waiting for a promise that nothing can settle/,
      ],
    ])(
      'ends a program that %s with an error at once, not at the time limit',
      async (_what, source, message) => {
        await withSession(async (execute) => {
          const result = await execute(source);
          expect(result.status).toBe('error');
          expect(result.error).toMatch(message);
          expect((await execute('"alive"')).value).toBe('alive');
        });
      },
    );
  });

  describe('V8 failures cost one host process, never this one', () => {
    it(`${catastropheTitle}; the session reports it and the next program runs`, async () => {
      await withSession(
        async (execute) => {
          const crashed = await execute('new Array(2 ** 27).fill(1).length');
          expect(crashed.status).toBe('error');
          expect(crashed.error).toMatch(catastropheOutcome);
          expect((await execute('"alive"')).value).toBe('alive');
        },
        { memoryBytes: 32 * 1024 * 1024 },
      );
    });

    it('stops an allocation the isolate’s heap limit misses by watching the host’s resident memory', async () => {
      await withSession(
        async (execute) => {
          const result = await execute('const big = "x".repeat(2 ** 28); big.indexOf("y")');
          expect(result.status).toBe('error');
          expect(result.error).toMatch(/memory limit of 33554432 bytes/);
          expect((await execute('"alive"')).value).toBe('alive');
        },
        { memoryBytes: 32 * 1024 * 1024 },
      );
    });
  });

  describe('what the host may read', () => {
    it('is this package, code mode, core and isolated-vm’s own directory, not its install-time dependencies', () => {
      const paths = v8Engine.runtimePaths;
      expect(paths.some((path) => /isolated-vm@[^/]+\/node_modules\/isolated-vm$/.test(path))).toBe(true);
      expect(paths.some((path) => /prebuild-install|simple-get|tar-fs/.test(path))).toBe(false);
      expect(paths.length).toBeLessThan(40);
    });
  });

  describe('by name', () => {
    it("is what the registry loads for 'v8'", async () => {
      const runtime = createRuntime({ importModule: (specifier) => import(specifier) });
      expect(await runtime.registry.engine('v8')).toBe(v8Engine);
    });

    // By name, the engine uses the isolated-vm installed beside the package: this workspace's,
    // built for the machine's Node.js, which the LTS pass's Node.js refuses.
    it.skipIf(v8EngineHere !== v8Engine)(
      v8EngineHere === v8Engine
        ? "runs an agent's programs with codeMode({ engine: 'v8' })"
        : "runs an agent's programs with codeMode({ engine: 'v8' }) (skipped: the workspace's own isolated-vm is built for the machine's Node.js, not this one)",
      async () => {
        const runtime = createRuntime({ importModule: (specifier) => import(specifier) });
        const model = new ScriptedModel([
          {
            toolCalls: [{ name: 'exec', input: { source: '(await tools.echo({ text: "by name" })).text' } }],
          },
          { text: 'done' },
        ]);
        const agent = defineAgent({
          name: 'research',
          model,
          tools: [echo],
          codeMode: codeMode({ engine: 'v8', sandbox: 'unrestricted' }),
        });
        const run = await agent.ask('go', { runtime });
        expect(run.outcome).toBe('completed');
        const reply = model.calls[1]?.messages.at(-1);
        expect(reply?.role === 'tool' ? JSON.parse(reply.content) : undefined).toMatchObject({
          status: 'completed',
          value: 'by name',
        });
      },
    );
  });

  describe('placements', () => {
    it('refuses the thread placement with a clear configuration error', async () => {
      const run = await defineAgent({
        name: 'research',
        model: new ScriptedModel([{ text: 'hi' }]),
        tools: [echo],
        codeMode: codeMode({ engine: v8EngineHere, sandbox: 'unrestricted', placement: 'thread' }),
      }).ask('hi');
      expect(run.outcome).toBe('failed');
      expect(run.error).toMatchObject({
        code: 'CODE_MODE_CONFIGURATION_INVALID',
        message: expect.stringMatching(/engine 'v8' supports placement process or session, not 'thread'/),
      });
      await expect(
        openCodeModeSession({ engine: v8EngineHere, sandbox: 'unrestricted', placement: 'thread' }),
      ).rejects.toMatchObject({
        code: 'CODE_MODE_CONFIGURATION_INVALID',
        message: expect.stringMatching(/placement 'process'/),
      });
    });
  });
});
