// The floor under a tool round trip on this machine: a bare ping-pong between this process and a
// child Node over the kind of channel an engine host has (a socket pair on the child's fd 3),
// with frames of the sizes a no-op tool call and its answer take, the child started plainly and
// inside bubblewrap by code mode's own sandbox factory (the same backend, policy and limits as an
// engine host). Beside it, Ghost's own round trip measured the same way: the time between one
// call of a program reaching its tool and the next, per call, in a session host and in a fresh
// host per program. Medians over every call of several runs, in µs.
// Alone: `node bench/round-trip-floor.js [calls] [runs]` after `pnpm build`.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openCodeModeSession } from '@ghost/code-mode';
import { createRuntime, defineTool } from '@ghost/core';
import { quickjsEngine } from '@ghost/engine-quickjs';
import { bwrapSandbox } from '@ghost/sandbox-bwrap';
import Type from 'typebox';
import { defaultCodeModeLimits } from '../packages/code-mode/dist/limits.js';
import { createSandboxFactory } from '../packages/code-mode/dist/parent/sandbox-factory.js';
import { encodeFrame, FrameDecoder } from '../packages/code-mode/dist/shared/frame-codec.js';

const here = dirname(fileURLToPath(import.meta.url));
const childScript = join(here, 'round-trip-floor-child.js');
const codeModeDist = join(here, '..', 'packages', 'code-mode', 'dist');

export const median = (samples) => {
  const sorted = [...samples].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)];
};

/**
 * Answers the child's calls on `channel` until its summary arrives; resolves to its round trips.
 * `bytes`: a fixed answer after each frame's length header; `codec`: decoded and answered with an
 * encoded `tool_results` frame, as the parent's link does.
 */
function answerCalls(channel, mode) {
  const fixedAnswer = encodeFrame({
    type: 'tool_results',
    programId: 'p1',
    results: [{ callId: '1', ok: true, value: null }],
  });
  const decoder = new FrameDecoder();
  return new Promise((resolve, reject) => {
    channel.on('data', (chunk) => {
      for (const message of decoder.push(chunk)) {
        if (message.type === 'summary') {
          resolve(message.roundTrips);
          return;
        }
        const answer =
          mode === 'bytes'
            ? fixedAnswer
            : encodeFrame({
                type: 'tool_results',
                programId: message.programId,
                results: message.calls.map(({ callId }) => ({ callId, ok: true, value: null })),
              });
        channel.write(answer);
      }
    });
    channel.on('error', reject);
  });
}

/** One plain run: the child spawned with a socket pair on fd 3. */
async function plainRun(mode, calls) {
  const child = spawn(process.execPath, [childScript, mode, String(calls)], {
    stdio: ['ignore', 'inherit', 'inherit', 'pipe'],
  });
  const exited = new Promise((resolve) => child.on('close', resolve));
  try {
    return await answerCalls(child.stdio[3], mode);
  } finally {
    await exited;
  }
}

/** The same in bubblewrap, through code mode's sandbox factory; undefined where it is unavailable. */
async function sandboxedRunner() {
  const runtime = createRuntime();
  let factory;
  try {
    factory = await createSandboxFactory(bwrapSandbox, runtime, defaultCodeModeLimits, { spareHosts: 0 });
  } catch (error) {
    await runtime.close();
    return { unavailable: error.message };
  }
  return {
    async run(mode, calls) {
      const child = await factory.spawn({
        command: process.execPath,
        args: [childScript, mode, String(calls)],
        runtimePaths: [here, codeModeDist],
      });
      try {
        return await answerCalls(child.channel, mode);
      } finally {
        await child.exited;
        await child.close();
      }
    },
    close: () => runtime.close(),
  };
}

/**
 * Per-call intervals of a program of `calls` sequential no-op calls, in Ghost (QuickJS in
 * bubblewrap): the time from one call reaching the tool to the next, the whole round trip.
 */
async function ghostRun(session, calls, stamps) {
  stamps.length = 0;
  const result = await session.execute(`for (let i = 0; i < ${calls}; i++) await tools.noop({}); 1`);
  if (result.status !== 'completed') throw new Error(`bench program failed: ${result.error}`);
  const intervals = [];
  for (let index = 1; index < stamps.length; index += 1)
    intervals.push((stamps[index] - stamps[index - 1]) * 1000);
  return intervals;
}

async function ghostRunner(placement) {
  const stamps = [];
  const noop = defineTool({
    name: 'noop',
    description: 'Does nothing.',
    input: Type.Object({}),
    execute: () => {
      stamps.push(performance.now());
      return null;
    },
  });
  const opened = await openCodeModeSession({
    engine: quickjsEngine,
    tools: [noop],
    placement,
    // The backend itself, not the name 'native': resolved by name from the working directory,
    // which need not be this package's when peers.js runs it.
    sandbox: bwrapSandbox,
    limits: { toolCalls: 100_000, programs: 1000 },
    maxToolCalls: 1_000_000_000,
  });
  return {
    run: (calls) => ghostRun(opened.session, calls, stamps),
    close: () => opened.close(),
  };
}

const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The floor and Ghost's round trips, interleaved run by run so load on a shared machine spreads
 * over all of them. Resolves to rows `{ name, median, calls }` (µs per round trip).
 */
export async function roundTripFloorFigures({ calls = 1000, runs = 5, ghost = true } = {}) {
  const sandboxed = await sandboxedRunner();
  const ghostRunners = ghost
    ? { session: await ghostRunner('session'), process: await ghostRunner('process') }
    : {};
  const samples = new Map();
  const add = (name, values) => samples.set(name, [...(samples.get(name) ?? []), ...values]);
  try {
    for (let run = 0; run < runs; run += 1) {
      for (const mode of ['bytes', 'codec']) {
        add(`floor, plain, ${mode}`, await plainRun(mode, calls));
        if (sandboxed.run) add(`floor, bwrap, ${mode}`, await sandboxed.run(mode, calls));
      }
      for (const [placement, runner] of Object.entries(ghostRunners)) {
        // A fresh host's spare needs time to start; a session host waits as long.
        await delay(500);
        add(`Ghost QuickJS/bwrap, ${placement} placement`, await runner.run(calls));
      }
    }
  } finally {
    for (const runner of Object.values(ghostRunners)) await runner.close();
    await sandboxed.close?.();
  }
  const rows = [...samples].map(([name, values]) => ({ name, median: median(values), calls: values.length }));
  return { rows, unavailable: sandboxed.unavailable };
}

/** Lines for the rows, each Ghost figure with the floor beside it and the ratio. */
export function formatRoundTripFloor({ rows, unavailable }) {
  const floor =
    rows.find((row) => row.name === 'floor, bwrap, codec') ??
    rows.find((row) => row.name === 'floor, plain, codec');
  const lines = rows.map((row) => {
    const ratio =
      row.name.startsWith('Ghost') && floor
        ? ` (${(row.median / floor.median).toFixed(2)}× the floor, ${floor.name})`
        : '';
    return `round trip, ${row.name}: ${row.median.toFixed(1)} µs median of ${row.calls} calls${ratio}`;
  });
  if (unavailable) lines.push(`floor in bubblewrap not measured: ${unavailable}`);
  return lines;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [calls, runs] = process.argv.slice(2).map(Number);
  const figures = await roundTripFloorFigures({ calls: calls || 1000, runs: runs || 5 });
  for (const line of formatRoundTripFloor(figures)) console.log(line);
}
