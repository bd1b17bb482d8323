// Engine figures: QuickJS, V8 and Python (Pyodide) side by side in one run, each program in a
// fresh prewarmed host process, sandbox 'unrestricted' and, where it runs, bubblewrap. Each
// figure runs the same program in each engine's language. Sessions come from code-mode.js.
import { defineTool } from '@ghost/core';
import { pythonEngine } from '@ghost/engine-python';
import { quickjsEngine } from '@ghost/engine-quickjs';
import { v8Engine } from '@ghost/engine-v8';
import { bwrapSandbox } from '@ghost/sandbox-bwrap';
import Type from 'typebox';
import { delay, noop, timed, withSession } from './code-mode.js';
import { measureSamples } from './measure.js';

const engines = [quickjsEngine, v8Engine, pythonEngine];

/**
 * Time for the spare host to be ready before a sample, so each figure is a prewarmed exec.
 * Pyodide's host loads a 30 MB memory snapshot before it is ready, so it gets longer.
 */
const prewarmMs = { quickjs: 900, v8: 900, python: 2500 };

const roundTripCalls = 200;

const sleep20 = defineTool({
  name: 'sleep20',
  description: 'Takes 20 ms.',
  input: Type.Object({}),
  execute: () => delay(20).then(() => null),
});

/** The programs of each figure, by language. */
const programs = {
  one: { javascript: '1', python: '1' },
  roundTrip: {
    javascript: `for (let i = 0; i < ${roundTripCalls}; i++) await tools.noop({});`,
    python: `for i in range(${roundTripCalls}):\n    await tools.noop()`,
  },
  fanOut: {
    javascript: 'await Promise.all(Array.from({ length: 64 }, () => tools.sleep20({})))',
    python: 'import asyncio\nawait asyncio.gather(*(tools.sleep20() for _ in range(64)))',
  },
  // A plain loop over a small array: what QuickJS and CPython interpret and V8 compiles.
  cpuHeavy: {
    javascript:
      'const values = Array.from({ length: 1000 }, (_, i) => i);\nlet total = 0;\nfor (let round = 0; round < 3000; round++) for (const value of values) total += (value * round) % 7;\ntotal',
    python:
      'values = list(range(1000))\ntotal = 0\nfor round in range(3000):\n    for value in values:\n        total += (value * round) % 7\ntotal',
  },
};

const programFor = (figure, engine) => programs[figure][engine.language];

/** A prewarmed exec of the figure's program, in milliseconds. */
function execTimes(name, options, figure, runs) {
  const { engine } = options;
  return withSession(options, (session) =>
    measureSamples(
      name,
      async () => {
        await delay(prewarmMs[engine.name]);
        return timed(() => session.execute(programFor(figure, engine)));
      },
      { runs, warmup: 2 },
    ),
  );
}

/** An exec with no spare host ready: the host's start, the snapshot's load and the program. */
function coldExecTimes(name, options) {
  return withSession({ ...options, prewarm: false }, (session) =>
    measureSamples(name, () => timed(() => session.execute('1')), { runs: 8, warmup: 1 }),
  );
}

/** Sequential no-op calls, less an empty program's time, per call (milliseconds). */
function roundTripTimes(name, engine) {
  return withSession({ engine, tools: [noop] }, (session) =>
    measureSamples(
      name,
      async () => {
        await delay(prewarmMs[engine.name]);
        const total = await timed(() => session.execute(programFor('roundTrip', engine)));
        await delay(prewarmMs[engine.name]);
        const empty = await timed(() => session.execute('1'));
        return (total - empty) / roundTripCalls;
      },
      { runs: 6, warmup: 1 },
    ),
  );
}

export async function engineFigures() {
  const results = [];
  const detection = await bwrapSandbox.detect();
  const sandboxes = [{ label: 'unrestricted', sandbox: 'unrestricted' }];
  if (detection.available) sandboxes.push({ label: 'bwrap', sandbox: bwrapSandbox });
  for (const { label, sandbox } of sandboxes) {
    for (const engine of engines) {
      const name = `engines: warm exec of \`1\`, ${engine.name} (${label})`;
      results.push(await execTimes(name, { engine, sandbox }, 'one', 12));
    }
  }
  for (const engine of engines) {
    const name = `engines: cold exec of \`1\` (no spare host), ${engine.name} (bwrap if present)`;
    results.push(
      await coldExecTimes(name, { engine, sandbox: detection.available ? bwrapSandbox : 'unrestricted' }),
    );
  }
  for (const engine of engines) {
    results.push(await roundTripTimes(`engines: guest → no-op tool round trip, ${engine.name}`, engine));
  }
  for (const engine of engines) {
    const name = `engines: 64 parallel 20 ms calls, concurrency 8, ${engine.name}`;
    results.push(await execTimes(name, { engine, tools: [sleep20] }, 'fanOut', 6));
  }
  for (const engine of engines) {
    const name = `engines: CPU-heavy program (3M loop steps), ${engine.name}`;
    results.push(await execTimes(name, { engine }, 'cpuHeavy', 6));
  }
  return { results };
}
