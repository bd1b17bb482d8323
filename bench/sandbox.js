// Sandbox figures: what bubblewrap costs over a plain child, and code mode inside it (the default
// on Linux). Each program gets a fresh host; prewarmed means a spare was started ahead. The
// 'session' placement's figures are for one sandboxed host serving a session's programs in turn.
import { realpathSync } from 'node:fs';
import { createSandboxWorkspace } from '@ghost/core/sandbox';
import { bwrapSandbox, createBwrapSandbox } from '@ghost/sandbox-bwrap';
import { unrestrictedSandbox } from '@ghost/sandbox-unrestricted';
import { coldExec, programsPerSecond, roundTrip, warmExec } from './code-mode.js';
import { measureSamples } from './measure.js';

const node = realpathSync(process.execPath);

/** Milliseconds from spawn to exit of `node -e 0` under one backend, closed afterwards. */
async function spawnToExit(backend, spec) {
  const workspace = await createSandboxWorkspace({ prefix: 'ghost-bench-' });
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

/** @returns {Promise<{ results: object[], throughput: number } | { unavailable: string }>} */
export async function sandboxFigures() {
  const detection = await bwrapSandbox.detect();
  if (!detection.available) return { unavailable: detection.reason ?? 'bwrap is not available' };
  const results = [];
  results.push(
    await measureSamples('spawn → exit of `node -e 0`, plain child (unrestricted)', () =>
      spawnToExit(unrestrictedSandbox, { network: 'shared' }),
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
  const inBwrap = { sandbox: bwrapSandbox };
  results.push(await warmExec('code mode in bwrap: warm exec of `1` (prewarmed)', inBwrap));
  results.push(await coldExec('code mode in bwrap: cold exec of `1` (no spare)', inBwrap));
  // Joining a cgroup can block for a kernel grace period (cgroup v1 here: ~10-15 ms when no other
  // process joined one just before); without cgroups memory is sampled and `processes` refused.
  results.push(
    await coldExec('code mode in bwrap, cgroups off: cold exec of `1` (no spare)', {
      sandbox: createBwrapSandbox({ cgroups: 'off' }),
    }),
  );
  const throughput = await programsPerSecond(inBwrap, 10);
  // placement 'session': one sandboxed host serves the session's programs, each in a fresh guest.
  const sessionHost = { ...inBwrap, placement: 'session' };
  results.push(await warmExec("code mode in bwrap, placement 'session': exec of `1`", sessionHost));
  results.push(
    await roundTrip("code mode in bwrap, placement 'session': guest → no-op tool round trip", sessionHost),
  );
  const sessionThroughput = await programsPerSecond(sessionHost, 50);
  return { results, throughput, sessionThroughput };
}
