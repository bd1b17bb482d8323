// Sandbox figures: what bubblewrap costs over a plain child, and code mode inside it (the default
// on Linux). Each program gets a fresh host; prewarmed means a spare was started ahead.
import { realpathSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openCodeModeSession, unrestrictedSandbox } from '@ghost/code-mode';
import { quickjsEngine } from '@ghost/engine-quickjs';
import { bwrapSandbox } from '@ghost/sandbox-bwrap';
import { measureSamples } from './measure.js';

const delay = (milliseconds) => new Promise((resolve) => setTimeout(resolve, milliseconds));
const node = realpathSync(process.execPath);

/** Milliseconds from spawn to exit of `node -e 0` under one backend, closed afterwards. */
async function spawnToExit(backend, spec) {
  const workspace = await mkdtemp(join(tmpdir(), 'ghost-bench-'));
  const startedAt = performance.now();
  const child = await backend.spawn({
    command: node,
    args: ['-e', '0'],
    env: {},
    runtimePaths: [],
    workspace,
    ...spec,
  });
  const exit = await child.exited;
  const elapsed = performance.now() - startedAt;
  await child.close();
  if (exit.code !== 0) throw new Error(`bench child failed: ${child.stderr.text}`);
  return elapsed;
}

async function timed(work) {
  const startedAt = performance.now();
  const result = await work();
  if (result.status !== 'completed') throw new Error(`bench program failed: ${result.error}`);
  return performance.now() - startedAt;
}

async function withSession(options, work) {
  const opened = await openCodeModeSession({
    engine: quickjsEngine,
    sandbox: bwrapSandbox,
    limits: { programs: 100_000 },
    ...options,
  });
  try {
    return await work(opened.session);
  } finally {
    await opened.close();
  }
}

/** @returns {Promise<{ results: object[], throughput: number } | { unavailable: string }>} */
export async function sandboxFigures() {
  const detection = await bwrapSandbox.detect();
  if (!detection.available) return { unavailable: detection.reason ?? 'bwrap is not available' };
  const results = [];
  results.push(
    await measureSamples('spawn → exit of `node -e 0`, plain child (unrestricted)', () =>
      spawnToExit(unrestrictedSandbox, { network: 'host' }),
    ),
  );
  results.push(
    await measureSamples('spawn → exit of `node -e 0`, bwrap (namespaces, seccomp, rlimits, cgroup)', () =>
      spawnToExit(bwrapSandbox, {
        subprocesses: 'deny',
        limits: { memoryBytes: 256 * 1024 * 1024, cpuSeconds: 10, fileBytes: 1_000_000, openFiles: 256 },
      }),
    ),
  );
  results.push(
    await withSession({}, (session) =>
      measureSamples('code mode in bwrap: warm exec of `1` (prewarmed)', async () => {
        await delay(900);
        return timed(() => session.execute('1'));
      }),
    ),
  );
  results.push(
    await withSession({ prewarm: false }, (session) =>
      measureSamples(
        'code mode in bwrap: cold exec of `1` (no spare)',
        () => timed(() => session.execute('1')),
        {
          runs: 20,
          warmup: 2,
        },
      ),
    ),
  );
  const sessions = 4;
  const perSession = 10;
  const startedAt = performance.now();
  await Promise.all(
    Array.from({ length: sessions }, () =>
      withSession({}, async (session) => {
        for (let index = 0; index < perSession; index += 1) await timed(() => session.execute('1 + 1'));
      }),
    ),
  );
  const throughput = (sessions * perSession) / ((performance.now() - startedAt) / 1000);
  return { results, throughput };
}
