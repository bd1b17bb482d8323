import { defineTool } from '@ghost/core';
import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { CodeModeStateError } from '../../errors.js';
import { descendantProcesses } from '../child-processes.js';
import { itWithPrograms } from './case-programs.js';
import type { ConformanceContext } from './conformance-context.js';
import { delay, echoTool, foreverTool, Gate, gateTool, observeToEnd } from './conformance-fixtures.js';

/**
 * The conformance cases for the control operations: `wait` and `stop` on a running program, one operation at a time.
 * Registers them under the current `describe`; `describeEngineConformance` runs it with the others.
 */
export function describeControlOperationCases(context: ConformanceContext): void {
  describe('control operations', () => {
    describeObservationCases(context);
    describeStopAndWallClockCases(context);
  });
}

/** wait and exec around a program still working, and one operation at a time. */
function describeObservationCases({ engine, open }: ConformanceContext): void {
  const itWith = itWithPrograms(engine.language);
  itWith(
    'returns still_working after the observation window, then wait returns only new output',
    {
      javascript: 'text("started"); const value = await tools.wait_for_gate({}); text("finished"); value',
      python: 'text("started")\nvalue = await tools.wait_for_gate()\ntext("finished")\nvalue',
    },
    async (source) => {
      const gate = new Gate();
      const waitTool = gateTool(gate);
      const { session } = await open({ tools: [waitTool], observationWindowMs: 150 });
      // exec's window covers the host's start too: on a slow machine it may end before the
      // program has printed anything, and a wait then sees the start.
      let first = await session.execute(source);
      while (first.status === 'still_working' && first.output === '') first = await session.wait();
      expect(first).toEqual({ status: 'still_working', output: 'started\n' });
      const second = await session.wait();
      expect(second).toEqual({ status: 'still_working', output: '' });
      gate.open();
      const third = await session.wait();
      expect(third).toEqual({ status: 'completed', output: 'finished\n', value: 'opened' });
      await expect(session.wait()).rejects.toThrow(CodeModeStateError);
    },
  );

  // No program: the same in every language.
  it('refuses wait and stop with nothing running', async () => {
    const { session } = await open();
    await expect(session.wait()).rejects.toThrow(/No program is running/);
    await expect(session.stop()).rejects.toThrow(CodeModeStateError);
  });

  itWith(
    'refuses exec while a program is still working, and the old program survives',
    { javascript: 'await tools.wait_for_gate({})', python: 'await tools.wait_for_gate()' },
    async (source) => {
      const gate = new Gate();
      const waitTool = gateTool(gate);
      const { session } = await open({ tools: [waitTool], observationWindowMs: 100 });
      expect((await session.execute(source)).status).toBe('still_working');
      await expect(session.execute('"second"')).rejects.toThrow(/still working/);
      gate.open();
      expect(await observeToEnd(session, await session.wait())).toEqual({
        status: 'completed',
        output: '',
        value: 'opened',
      });
    },
  );

  itWith(
    'runs one control operation at a time: a concurrent one is refused without running',
    {
      javascript: {
        first: 'await tools.echo({ text: "first" })',
        second: 'await tools.echo({ text: "second" })',
      },
      python: { first: 'await tools.echo(text="first")', second: 'await tools.echo(text="second")' },
    },
    async (sources) => {
      const log: unknown[] = [];
      const { session } = await open({ tools: [echoTool(log)] });
      const first = session.execute(sources.first);
      await expect(session.execute(sources.second)).rejects.toThrow(/one control operation at a time/);
      await expect(session.wait()).rejects.toThrow(/one control operation at a time/);
      expect((await first).value).toEqual({ text: 'first' });
      expect(log).toEqual(['first']);
    },
  );
}

/** stop, wallSeconds and limits.programs. */
function describeStopAndWallClockCases({ engine, open }: ConformanceContext): void {
  const itWith = itWithPrograms(engine.language);
  itWith(
    'stop ends a program with a tool call in flight: its signal fires and the late result is dropped',
    { javascript: 'text("waiting"); await tools.slow({})', python: 'text("waiting")\nawait tools.slow()' },
    async (source) => {
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
      const running = await session.execute(source);
      expect(running.status).toBe('still_working');
      await started.opened;
      // The output comes with exec, or with stop when exec's window ended before the host's start.
      const stopped = await session.stop();
      expect(stopped.status).toBe('terminated');
      expect(running.output + stopped.output).toBe('waiting\n');
      expect(wasAborted).toBe(true);
      finish.open();
      await delay(20);
      const stops = events.filter((event) => event.type === 'tool_stop');
      expect(stops).toHaveLength(1);
      expect(stops[0]?.data).toMatchObject({ status: 'error' });
      expect((await observeToEnd(session, await session.execute('"next"'))).value).toBe('next');
    },
  );

  const waitForever = { javascript: 'await tools.forever({})', python: 'await tools.forever()' };
  itWith(
    'ends a program at wallSeconds even when nobody observes it, and cleans up its host',
    waitForever,
    async (source) => {
      const forever = foreverTool();
      const { session } = await open({
        tools: [forever],
        observationWindowMs: 50,
        limits: { wallSeconds: 0.4 },
        prewarm: false,
      });
      expect((await session.execute(source)).status).toBe('still_working');
      await delay(900);
      expect(await descendantProcesses()).toEqual([]);
      const expired = await session.wait();
      expect(expired.status).toBe('error');
      expect(expired.error).toMatch(/time limit of 0\.4 s \(limits\.wallSeconds\)/);
    },
  );

  itWith('counts wallSeconds from exec: wait does not extend it', waitForever, async (source) => {
    const forever = foreverTool();
    const { session } = await open({
      tools: [forever],
      observationWindowMs: 200,
      limits: { wallSeconds: 0.5 },
    });
    // 200 ms windows against a 500 ms lifetime: had a wait restarted the clock, every observation
    // would find the program working. However slow the machine, it ends within a few.
    let observation = await session.execute(source);
    for (let waits = 0; observation.status === 'still_working' && waits < 10; waits += 1) {
      observation = await session.wait();
    }
    expect(observation.status).toBe('error');
    expect(observation.error).toMatch(/limits\.wallSeconds/);
  });

  // Programs the same in every language.
  it('refuses exec past limits.programs', async () => {
    const { session } = await open({ limits: { programs: 2 } });
    await session.execute('1');
    await session.execute('2');
    await expect(session.execute('3')).rejects.toThrow(/its 2 programs \(limits\.programs\)/);
  });
}
