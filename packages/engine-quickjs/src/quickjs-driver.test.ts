import { serveProgramInProcess } from '@ghost/code-mode/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createQuickJSDriver } from './quickjs-driver.js';
import { readQuickJSWasm } from './quickjs-wasm.js';

const limits = { outputBytes: 10_000, memoryBytes: 32 * 1024 * 1024, cpuSeconds: 10, wallSeconds: 10 };
const tools = ['echo'];

describe('the QuickJS driver in a host', () => {
  it('serves the real program after the rehearsal with nothing of the rehearsal in it', async () => {
    const driver = createQuickJSDriver(readQuickJSWasm());
    const result = await serveProgramInProcess(driver, {
      rehearse: true,
      tools,
      limits,
      source:
        'console.log(ALL_TOOLS.map((tool) => tool.name).join());\nreturn await tools.echo({ said: "hi" });',
    });
    expect(result).toEqual({
      status: 'completed',
      value: { said: 'hi' },
      output: 'echo\n',
      skippedOutputBytes: 0,
      toolCalls: [{ name: 'echo', input: { said: 'hi' } }],
    });
  });

  it('gives the next guest a working engine after a program that failed', async () => {
    const driver = createQuickJSDriver(readQuickJSWasm());
    const failing = await serveProgramInProcess(driver, { tools, limits, source: 'throw new Error("boom")' });
    expect(failing).toMatchObject({ status: 'error', error: expect.stringContaining('boom') });
    const next = await serveProgramInProcess(driver, { tools, limits, source: 'return 6 * 7;' });
    expect(next).toMatchObject({ status: 'completed', value: 42 });
  });

  describe('a runtime QuickJS cannot free', () => {
    afterEach(() => {
      vi.restoreAllMocks();
    });

    it('drops the wasm instance quietly after a program that allocated in a promise job, and serves the next', async () => {
      // Emscripten binds console.error when an instance is made, so watch it before the driver makes one.
      const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
      const driver = createQuickJSDriver(readQuickJSWasm());
      const allocating = await serveProgramInProcess(driver, {
        tools,
        limits,
        source:
          'await tools.echo({});\nconst items = [];\nfor (let i = 0; i < 300000; i++) items.push({ i });\nreturn items.length;',
      });
      expect(allocating).toMatchObject({ status: 'completed', value: 300000 });
      const next = await serveProgramInProcess(driver, { tools, limits, source: 'return 6 * 7;' });
      expect(next).toMatchObject({ status: 'completed', value: 42 });
      expect(errors.mock.calls.flat().join('\n')).not.toContain('Aborted');
    });
  });
});
