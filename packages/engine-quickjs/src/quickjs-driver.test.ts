import { type HostFrame, type HostTransport, rehearseProgram, serveProgram } from '@ghost/code-mode/host';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createQuickJSDriver } from './quickjs-driver.js';
import { readQuickJSWasm } from './quickjs-wasm.js';

const limits = { outputBytes: 10_000, memoryBytes: 32 * 1024 * 1024, cpuSeconds: 10, wallSeconds: 10 };
const echo = { name: 'echo', identifier: 'echo', description: 'Echoes.', inputSchema: {} };

/** A transport that plays the parent: set up, run `source` (already rewritten), answer every call with its input. */
function parentPlaying(source: string): { transport: HostTransport; frames: HostFrame[] } {
  const frames: HostFrame[] = [];
  let listener: (frame: unknown) => void = () => {};
  const deliver = (frame: object) => setImmediate(() => listener(frame));
  const transport: HostTransport = {
    send(frame) {
      frames.push(frame);
      if (frame.type === 'ready') deliver({ type: 'execute', programId: 'p1', source });
      if (frame.type === 'tool_calls') {
        const results = frame.calls.map(({ callId, input }) => ({ callId, ok: true, value: input }));
        deliver({ type: 'tool_results', programId: 'p1', results });
      }
    },
    onFrame(next) {
      listener = next;
      deliver({ type: 'setup', tools: [echo], limits });
    },
  };
  return { transport, frames };
}

describe('the QuickJS driver in a host', () => {
  it('serves the real program after the rehearsal with nothing of the rehearsal in it', async () => {
    const driver = createQuickJSDriver(readQuickJSWasm());
    await rehearseProgram(driver);
    const { transport, frames } = parentPlaying(
      'console.log(ALL_TOOLS.map((tool) => tool.name).join());\nreturn await tools.echo({ said: "hi" });',
    );
    await serveProgram(driver, transport);
    expect(frames.filter((frame) => frame.type === 'output').map((frame) => frame.text)).toEqual(['echo\n']);
    expect(frames.at(-1)).toEqual({
      type: 'done',
      programId: 'p1',
      status: 'completed',
      value: { said: 'hi' },
    });
  });

  it('gives the next guest a working engine after a program that failed', async () => {
    const driver = createQuickJSDriver(readQuickJSWasm());
    const failing = parentPlaying('throw new Error("boom")');
    await serveProgram(driver, failing.transport);
    expect(failing.frames.at(-1)).toMatchObject({ status: 'error', error: expect.stringContaining('boom') });
    const next = parentPlaying('return 6 * 7;');
    await serveProgram(driver, next.transport);
    expect(next.frames.at(-1)).toMatchObject({ status: 'completed', value: 42 });
  });

  describe('a runtime QuickJS cannot free', () => {
    afterEach(() => {
      vi.restoreAllMocks();
    });

    it('drops the wasm instance quietly after a program that allocated in a promise job, and serves the next', async () => {
      // Emscripten binds console.error when an instance is made, so watch it before the driver makes one.
      const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
      const driver = createQuickJSDriver(readQuickJSWasm());
      const allocating = parentPlaying(
        'await tools.echo({});\nconst items = [];\nfor (let i = 0; i < 300000; i++) items.push({ i });\nreturn items.length;',
      );
      await serveProgram(driver, allocating.transport);
      expect(allocating.frames.at(-1)).toMatchObject({ status: 'completed', value: 300000 });
      const next = parentPlaying('return 6 * 7;');
      await serveProgram(driver, next.transport);
      expect(next.frames.at(-1)).toMatchObject({ status: 'completed', value: 42 });
      expect(errors.mock.calls.flat().join('\n')).not.toContain('Aborted');
    });
  });
});
