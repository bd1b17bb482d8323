// Times a piece of work repeatedly and summarises it. Warm-up runs are discarded so JIT and
// first-use costs do not skew the figures.

/**
 * @param {string} name
 * @param {() => Promise<unknown>} work
 * @param {{ runs?: number, warmup?: number }} [options]
 */
export async function measure(name, work, { runs = 200, warmup = 20 } = {}) {
  for (let index = 0; index < warmup; index += 1) await work();
  const samples = [];
  for (let index = 0; index < runs; index += 1) {
    const startedAt = performance.now();
    await work();
    samples.push(performance.now() - startedAt);
  }
  samples.sort((left, right) => left - right);
  const at = (fraction) => samples[Math.min(samples.length - 1, Math.floor(fraction * samples.length))];
  return { name, runs, median: at(0.5), p90: at(0.9) };
}

/**
 * Like {@link measure}, for work that times itself: `sample` returns the milliseconds to record
 * (so set-up such as waiting for a prewarmed host stays out of the figure).
 *
 * @param {string} name
 * @param {() => Promise<number>} sample
 * @param {{ runs?: number, warmup?: number }} [options]
 */
export async function measureSamples(name, sample, { runs = 50, warmup = 5 } = {}) {
  for (let index = 0; index < warmup; index += 1) await sample();
  const samples = [];
  for (let index = 0; index < runs; index += 1) samples.push(await sample());
  samples.sort((left, right) => left - right);
  const at = (fraction) => samples[Math.min(samples.length - 1, Math.floor(fraction * samples.length))];
  return { name, runs, median: at(0.5), p90: at(0.9) };
}

/** @param {{ name: string, runs: number, median: number, p90: number }[]} results */
export function printTable(results) {
  const width = Math.max(...results.map((result) => result.name.length));
  console.log(`${'measurement'.padEnd(width)}  ${'median'.padStart(10)}  ${'p90'.padStart(10)}  runs`);
  for (const result of results) {
    const format = (milliseconds) =>
      milliseconds < 1 ? `${(milliseconds * 1000).toFixed(1)} µs` : `${milliseconds.toFixed(2)} ms`;
    console.log(
      `${result.name.padEnd(width)}  ${format(result.median).padStart(10)}  ${format(result.p90).padStart(10)}  ${result.runs}`,
    );
  }
}
