// Where a tool round trip's CPU goes, call by call: a program of 200 sequential no-op calls in a
// fresh host and in a session host, with the host's CPU (every thread of the host and, in
// bubblewrap, of the sandbox's processes: /proc/<pid>/task/<tid>/schedstat, nanoseconds) and this
// parent's CPU (process.cpuUsage) read at calls 1, 20, 100 and 200. CPU time, unlike wall time,
// stays meaningful on a loaded machine. Alone: `node bench/round-trip-cpu.js [runs] [variant...]`,
// variants as in host-cpu.js plus `session`; `GHOST_BENCH_SANDBOX=native` runs them in bubblewrap.
import { readdirSync, readFileSync } from 'node:fs';
import { defineTool } from '@ghost/core';
import Type from 'typebox';
import { delay, withSession } from './code-mode.js';
import { engineWith, hostVariants } from './host-cpu.js';

/** Every process below this one (the host, and bwrap's processes around it). */
function descendants() {
  const parents = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      parents.set(Number(entry), Number(/\nPPid:\t(\d+)/.exec(status)?.[1]));
    } catch {}
  }
  return [...parents.keys()].filter((pid) => {
    for (
      let ancestor = parents.get(pid);
      ancestor !== undefined && ancestor > 1;
      ancestor = parents.get(ancestor)
    )
      if (ancestor === process.pid) return true;
    return false;
  });
}

/** Nanoseconds on CPU of every thread of `pids`, as far as they still run. */
function cpuNanoseconds(pids) {
  let total = 0;
  for (const pid of pids) {
    try {
      for (const task of readdirSync(`/proc/${pid}/task`))
        total += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    } catch {}
  }
  return total;
}

const marks = [1, 20, 100, 200];
/** The call ranges reported, between consecutive marks. */
export const callRanges = marks.slice(1).map((to, index) => `${marks[index]}-${to}`);

/**
 * Host and parent CPU µs per call in each call range, the median over `runs` programs (the
 * first, which warms this process, is left out).
 */
export async function roundTripCpu(options, runs = 7) {
  let calls = 0;
  let pids = [];
  const samples = [];
  const stamp = defineTool({
    name: 'stamp',
    description: 'Reads the CPU clocks at some calls.',
    input: Type.Object({}),
    execute: () => {
      calls += 1;
      if (calls === 1) pids = descendants();
      if (marks.includes(calls)) samples.push({ host: cpuNanoseconds(pids), parent: process.cpuUsage() });
      return null;
    },
  });
  const perRun = [];
  await withSession({ ...options, tools: [stamp] }, async (session) => {
    for (let run = 0; run < runs; run += 1) {
      // Time for a fresh host's spare to start; a session host waits as long, since this
      // process's own CPU per call depends on how long it sat idle before the program.
      await delay(1500);
      calls = 0;
      samples.length = 0;
      const result = await session.execute(
        `for (let i = 0; i < ${marks.at(-1)}; i++) await tools.stamp({});`,
      );
      if (result.status !== 'completed') throw new Error(`bench program failed: ${result.error}`);
      perRun.push(
        samples.slice(1).map((sample, index) => {
          const before = samples[index];
          const count = marks[index + 1] - marks[index];
          const parentMicros =
            sample.parent.user + sample.parent.system - before.parent.user - before.parent.system;
          return { host: (sample.host - before.host) / 1000 / count, parent: parentMicros / count };
        }),
      );
    }
  });
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const counted = perRun.slice(1);
  return callRanges.map((range, index) => ({
    range,
    hostMicros: median(counted.map((row) => row[index].host)),
    parentMicros: median(counted.map((row) => row[index].parent)),
  }));
}

/** Session options for a variant name: `session`, or a host-cpu.js variant (`script+--flag`). */
export function variantOptions(name, sandbox) {
  if (name === 'session') return { placement: 'session', sandbox };
  const [base, extra] = name.split('+');
  const nodeOptions = hostVariants[base];
  return {
    sandbox,
    engine: engineWith(extra === undefined ? nodeOptions : [...(nodeOptions ?? []), ...extra.split(',')]),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [runs = '7', ...names] = process.argv.slice(2);
  const sandbox = process.env.GHOST_BENCH_SANDBOX ?? 'unrestricted';
  for (const name of names.length > 0 ? names : ['engine', 'session']) {
    const rows = await roundTripCpu(variantOptions(name, sandbox), Number(runs));
    console.log(
      `CPU per tool call, ${name} (${sandbox}): ${rows
        .map(
          (row) =>
            `calls ${row.range}: host ${row.hostMicros.toFixed(0)} µs, parent ${row.parentMicros.toFixed(0)} µs`,
        )
        .join('; ')}`,
    );
  }
}
