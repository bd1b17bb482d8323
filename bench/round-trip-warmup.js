// How a host's tool round trip changes as it warms up: programs of 1000 sequential no-op calls in
// the native sandbox, in a fresh host each (`placement: 'process'`) and in one session host, with
// the interval between calls at the tool averaged per range of calls (1–100, 100–300, 300–600,
// 600–1000) and each program's total. A fresh host's calls are slow while V8 warms its JavaScript
// up; a session host's are warm after its first program. Every program after a pause of 500 ms,
// so a spare host has started. Alone: `node bench/round-trip-warmup.js [programs]`;
// docs/decisions/2026-12-07-round-trip-and-imports.md has the figures.

import { fileURLToPath } from 'node:url';
import { openCodeModeSession } from '@ghost/code-mode';
import { defineTool } from '@ghost/core';
import { quickjsEngine } from '@ghost/engine-quickjs';

const calls = 1000;
const ranges = [
  [0, 100],
  [100, 300],
  [300, 600],
  [600, calls - 1],
];
const mean = (values) => values.reduce((sum, value) => sum + value, 0) / values.length;
const median = (values) => [...values].sort((left, right) => left - right)[Math.floor(values.length / 2)];
const delay = (milliseconds) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/** One placement's figures: per range the mean µs between calls (median over programs), and the median total. */
async function placementFigures(placement, programs) {
  let stamps = [];
  const noop = defineTool({
    name: 'noop',
    description: 'Does nothing.',
    input: { type: 'object', properties: {} },
    execute: () => {
      stamps.push(performance.now());
      return null;
    },
  });
  const opened = await openCodeModeSession({
    engine: quickjsEngine,
    sandbox: 'native',
    placement,
    tools: [noop],
    limits: { programs: 10_000, toolCalls: 100_000 },
    maxToolCalls: 1_000_000,
  });
  const source = `for (let index = 0; index < ${calls}; index += 1) await tools.noop({}); 1`;
  const perRange = ranges.map(() => []);
  const totals = [];
  try {
    // The first program also loads the parent's schema compiler: not counted.
    for (let program = 0; program <= programs; program += 1) {
      await delay(500);
      stamps = [];
      const startedAt = performance.now();
      const result = await opened.session.execute(source);
      if (result.status !== 'completed') throw new Error(`${placement}: ${result.status}: ${result.error}`);
      if (program === 0) continue;
      totals.push(performance.now() - startedAt);
      const gaps = stamps.slice(1).map((stamp, index) => (stamp - stamps[index]) * 1000);
      for (const [index, [from, to]] of ranges.entries()) perRange[index].push(mean(gaps.slice(from, to)));
    }
  } finally {
    await opened.close();
  }
  return { placement, ranges: perRange.map(median), totalMs: median(totals) };
}

/** Both placements, one after the other. */
export async function roundTripWarmupFigures(programs = 5) {
  return [await placementFigures('process', programs), await placementFigures('session', programs)];
}

export function formatRoundTripWarmup(rows) {
  return rows.map(
    (row) =>
      `round trip while a host warms up, ${row.placement} placement, µs per call by range: ${ranges
        .map(([from, to], index) => `${from + 1}-${to + 1} ${row.ranges[index].toFixed(0)}`)
        .join(', ')}; a ${calls}-call program ${row.totalMs.toFixed(0)} ms`,
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const programs = Number(process.argv[2] ?? 5);
  for (const line of formatRoundTripWarmup(await roundTripWarmupFigures(programs))) console.log(line);
}
