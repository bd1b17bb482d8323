// Engine figures: QuickJS and V8 side by side, each program in a fresh prewarmed host process,
// sandbox 'unrestricted' and, where it runs, bubblewrap. Sessions come from code-mode.js.
import { quickjsEngine } from '@ghost/engine-quickjs';
import { v8Engine } from '@ghost/engine-v8';
import { bwrapSandbox } from '@ghost/sandbox-bwrap';
import { delay, roundTrip, timed, withSession } from './code-mode.js';
import { measureSamples } from './measure.js';

const engines = [quickjsEngine, v8Engine];

/** Time for the spare host to be ready before a sample, so each figure is a prewarmed exec. */
const prewarmMs = 900;

/** A plain loop over a small array: what QuickJS interprets and V8 compiles. */
const cpuHeavy =
  'const values = Array.from({ length: 1000 }, (_, i) => i);\nlet total = 0;\nfor (let round = 0; round < 3000; round++) for (const value of values) total += (value * round) % 7;\ntotal';

/** A prewarmed exec of `source`, in milliseconds. */
function execTimes(name, options, source, runs) {
  return withSession(options, (session) =>
    measureSamples(
      name,
      async () => {
        await delay(prewarmMs);
        return timed(() => session.execute(source));
      },
      { runs, warmup: 2 },
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
      results.push(
        await execTimes(
          `engines: warm exec of \`1\`, ${engine.name} (${label})`,
          { engine, sandbox },
          '1',
          12,
        ),
      );
    }
  }
  for (const engine of engines) {
    results.push(
      await roundTrip(`engines: guest → no-op tool round trip, ${engine.name}`, { engine }, prewarmMs, {
        runs: 6,
        warmup: 1,
      }),
    );
  }
  for (const engine of engines) {
    results.push(
      await execTimes(`engines: CPU-heavy program (3M loop steps), ${engine.name}`, { engine }, cpuHeavy, 6),
    );
  }
  return { results };
}
