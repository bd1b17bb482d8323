// Code-mode figures: QuickJS programs in fresh host processes, sandbox 'unrestricted' (bench/sandbox.js
// measures the same programs in bubblewrap with these helpers), through the public session API.
import { readFile } from 'node:fs/promises';
import { openCodeModeSession } from '@ghost/code-mode';
import { defineTool } from '@ghost/core';
import { quickjsEngine } from '@ghost/engine-quickjs';
import Type from 'typebox';
import { measureSamples } from './measure.js';

export const delay = (milliseconds) => new Promise((resolve) => setTimeout(resolve, milliseconds));
/** A tool that does nothing: what a round trip is measured against. */
export const noop = defineTool({
  name: 'noop',
  description: 'Does nothing.',
  input: Type.Object({}),
  execute: () => null,
});
const sleep20 = defineTool({
  name: 'sleep20',
  description: 'Takes 20 ms.',
  input: Type.Object({}),
  execute: () => delay(20).then(() => null),
});
const limits = { programs: 100_000, toolCalls: 100_000 };

/** Milliseconds a program took; a program that did not complete fails the bench. */
export async function timed(work) {
  const startedAt = performance.now();
  const result = await work();
  if (result.status !== 'completed') throw new Error(`bench program failed: ${result.error}`);
  return performance.now() - startedAt;
}

/** Runs `work` with a fresh QuickJS session (sandbox 'unrestricted' unless `options` names one), closed afterwards. */
export async function withSession(options, work) {
  const opened = await openCodeModeSession({
    engine: quickjsEngine,
    sandbox: 'unrestricted',
    limits,
    maxToolCalls: 1_000_000,
    ...options,
  });
  try {
    return await work(opened.session);
  } finally {
    await opened.close();
  }
}

/** Resident memory of this process's direct children (the engine hosts), in MiB. */
async function hostResidentMiB() {
  const { readdir } = await import('node:fs/promises');
  const sizes = [];
  for (const entry of await readdir('/proc')) {
    try {
      const status = await readFile(`/proc/${entry}/status`, 'utf8');
      if (!status.includes(`\nPPid:\t${process.pid}\n`)) continue;
      const resident = /VmRSS:\s+(\d+) kB/.exec(status);
      if (resident) sizes.push(Number(resident[1]) / 1024);
    } catch {}
  }
  return sizes;
}

/** A prewarmed program's exec: the spare host gets time to start before each sample. */
export function warmExec(name, options = {}) {
  return withSession(options, (session) =>
    measureSamples(name, async () => {
      await delay(900);
      return timed(() => session.execute('1'));
    }),
  );
}

/** An exec with no spare ready, so each program waits for its host to start. */
export function coldExec(name, options = {}) {
  return withSession({ ...options, prewarm: false }, (session) =>
    measureSamples(name, () => timed(() => session.execute('1')), { runs: 20, warmup: 2 }),
  );
}

/**
 * Guest → no-op tool round trip: a program of sequential calls, less an empty program's time,
 * per call. `pause` lets a prewarmed host start before each program.
 */
export function roundTrip(name, options = {}, pause = 900, { runs = 10, warmup = 2 } = {}) {
  const calls = 200;
  return withSession({ ...options, tools: [noop] }, (session) =>
    measureSamples(
      name,
      async () => {
        await delay(pause);
        const program = `for (let i = 0; i < ${calls}; i++) await tools.noop({});`;
        const total = await timed(() => session.execute(program));
        await delay(pause);
        const empty = await timed(() => session.execute('1'));
        return (total - empty) / calls;
      },
      { runs, warmup },
    ),
  );
}

/** Programs per second over 4 concurrent sessions, each running `perSession` programs in turn. */
export async function programsPerSecond(options, perSession) {
  const sessions = 4;
  const startedAt = performance.now();
  await Promise.all(
    Array.from({ length: sessions }, () =>
      withSession(options, async (session) => {
        for (let index = 0; index < perSession; index += 1) await timed(() => session.execute('1 + 1'));
      }),
    ),
  );
  return (sessions * perSession) / ((performance.now() - startedAt) / 1000);
}

export async function codeModeFigures() {
  const results = [];
  // A prewarmed host is ready once its handshake is done; give it the time before each sample.
  results.push(await warmExec('code mode: warm exec of `1` (process, prewarmed)'));
  results.push(await coldExec('code mode: cold exec of `1` (process, no spare)'));
  results.push(await roundTrip('code mode: guest → no-op tool round trip (process)'));
  results.push(
    await withSession({ tools: [sleep20] }, (session) =>
      measureSamples(
        'code mode: 64 parallel 20 ms calls, concurrency 8',
        async () => {
          await delay(900);
          return timed(() =>
            session.execute('await Promise.all(Array.from({ length: 64 }, () => tools.sleep20({})))'),
          );
        },
        { runs: 10, warmup: 2 },
      ),
    ),
  );
  // The thread placement (piscina workers, sandbox 'unrestricted' only): language isolation alone.
  results.push(
    await withSession({ placement: 'thread' }, (session) =>
      measureSamples('code mode: warm exec of `1` (thread, prewarmed)', async () => {
        await delay(100);
        return timed(() => session.execute('1'));
      }),
    ),
  );
  results.push(
    await roundTrip('code mode: guest → no-op tool round trip (thread)', { placement: 'thread' }, 100),
  );
  const throughput = await programsPerSecond({}, 10);
  const threadThroughput = await programsPerSecond({ placement: 'thread' }, 50);
  const resident = await withSession({ tools: [sleep20] }, async (session) => {
    await delay(900);
    const running = session.execute('for (let i = 0; i < 10; i++) await tools.sleep20({}); 1');
    await delay(100);
    const sizes = await hostResidentMiB();
    await running;
    return sizes;
  });
  return { results, throughput, threadThroughput, resident };
}
