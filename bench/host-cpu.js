// Fresh-host cost: the CPU one program's host takes (user + system), and a tool round trip in a
// fresh host beside one in a session host. Host CPU comes from this process's reaped children
// (/proc/self/stat cutime + cstime), so it is CPU time, which a loaded machine inflates far less
// than wall time. It is measured with sandbox 'unrestricted': in bubblewrap the host runs below
// the sandbox's own init, whose children's CPU never reaches this process's counters (a host there
// showed ~20 ms, a tenth of its cost; round-trip-cpu.js reads per-thread CPU, which works in
// bubblewrap too). Alone: `node bench/host-cpu.js [programs] [variant...]`; variants compare how
// a host starts, and `GHOST_BENCH_SANDBOX=native` runs the round trips in bubblewrap.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { defineHostEngine } from '@ghost/code-mode/engine';
import { quickjsEngine } from '@ghost/engine-quickjs';
import { delay, roundTrip, timed, withSession } from './code-mode.js';

const ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** CPU milliseconds of this process's children that have exited and been reaped. */
function reapedChildrenCpuMs() {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  // Fields after the command name (which may hold spaces): state is field 3, cutime 16, cstime 17.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / ticksPerSecond;
}

const packageRoot = dirname(createRequire(import.meta.url).resolve('@ghost/engine-quickjs/package.json'));
const hostScript = join(packageRoot, 'dist/host.cjs');
// The engine's own V8 flags for its hosts (host-start.ts), and what it started hosts with before.
const liftoffOnly = '--liftoff-only';
const tiering = '--wasm-tiering-budget=2000000000';

/** How a host starts, by name: Node options for the QuickJS host. */
export const hostVariants = {
  engine: undefined, // what the engine does
  script: [liftoffOnly], // from the bundled script with the engine's flags: what the engine does
  tiered: [tiering], // from the script, with the wasm tier-up hosts had before 2026-12-05
  plain: [], // from the script, at V8's defaults
};

/** The QuickJS engine with hosts started with `nodeOptions` (undefined: the engine as it is). */
export function engineWith(nodeOptions) {
  if (nodeOptions === undefined) return quickjsEngine;
  return defineHostEngine({
    name: 'quickjs',
    language: 'javascript',
    runtimePaths: quickjsEngine.runtimePaths,
    placements: ['process', 'session'],
    instructions: quickjsEngine.instructions,
    host: { script: hostScript, nodeOptions },
  });
}

/**
 * Host CPU per program: `programs` trivial programs back to back in one session, a fresh host
 * each (the spare started after each program ends serves the next), over the hosts' CPU.
 */
export async function hostCpuPerProgram(name, options = {}, programs = 30) {
  let hostCpuMs = 0;
  await withSession(options, async (session) => {
    await delay(900);
    await timed(() => session.execute('1'));
    await delay(900);
    const before = reapedChildrenCpuMs();
    for (let index = 0; index < programs; index += 1) await timed(() => session.execute('1 + 1'));
    // The host of the last program has exited once the next spare is the only child.
    await delay(500);
    hostCpuMs = (reapedChildrenCpuMs() - before) / programs;
  });
  return { name, programs, hostCpuMs };
}

/**
 * The floor under any fresh host: the CPU of starting Node and exiting (`node -e 0`), and of
 * starting Node and compiling QuickJS's wasm, each a fresh process.
 */
export function nodeStartCpu(runs = 20) {
  const wasm = createRequire(join(packageRoot, 'package.json')).resolve(
    '@jitl/quickjs-wasmfile-release-sync/wasm',
  );
  const rows = [];
  for (const [name, args] of [
    ['node -e 0', ['-e', '0']],
    [
      'node, compiling QuickJS wasm',
      [tiering, '-e', `new WebAssembly.Module(require('fs').readFileSync(${JSON.stringify(wasm)}))`],
    ],
  ]) {
    const before = reapedChildrenCpuMs();
    for (let index = 0; index < runs; index += 1) spawnSync(process.execPath, args, { stdio: 'ignore' });
    rows.push({ name: `CPU of ${name}`, programs: runs, hostCpuMs: (reapedChildrenCpuMs() - before) / runs });
  }
  return rows;
}

/** Host CPU per program and fresh-host round trips for each variant named (all when none). */
export async function hostCostFigures(
  programs = 30,
  names = Object.keys(hostVariants),
  sandbox = 'unrestricted',
) {
  const cpu = nodeStartCpu();
  const trips = [];
  for (const name of names) {
    // `script+--flag,--flag`: a variant with more V8 flags, to try them.
    const [base, extra] = name.split('+');
    const engine = engineWith(
      extra === undefined ? hostVariants[base] : [...hostVariants[base], ...extra.split(',')],
    );
    cpu.push(
      await hostCpuPerProgram(
        `host CPU per program (${name}, unrestricted)`,
        { engine, sandbox: 'unrestricted' },
        programs,
      ),
    );
    trips.push(
      await roundTrip(
        `guest → no-op tool round trip, fresh host (${name}, ${sandbox})`,
        { engine, sandbox },
        900,
        {
          runs: 6,
          warmup: 1,
        },
      ),
    );
  }
  trips.push(
    await roundTrip(
      `guest → no-op tool round trip, session host (${sandbox})`,
      { placement: 'session', sandbox },
      900, // the fresh hosts' pause: this process's CPU per call depends on how long it sat idle
      {
        runs: 6,
        warmup: 1,
      },
    ),
  );
  return { cpu, trips };
}

/**
 * Each fresh-host round trip beside the session host's (the last of `trips`), and their ratio:
 * issue 22 asks for a fresh host within 1.5 times a session host.
 */
export function roundTripComparison(trips) {
  const session = trips.at(-1);
  const micros = (milliseconds) => `${(milliseconds * 1000).toFixed(0)} µs`;
  return trips
    .slice(0, -1)
    .map(
      (fresh) =>
        `${fresh.name}: median ${micros(fresh.median)} (p90 ${micros(fresh.p90)}) vs session host ${micros(session.median)} (p90 ${micros(session.p90)}): ${(fresh.median / session.median).toFixed(2)}×`,
    );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [programs = '30', ...names] = process.argv.slice(2);
  const { cpu, trips } = await hostCostFigures(
    Number(programs),
    names.length > 0 ? names : undefined,
    process.env.GHOST_BENCH_SANDBOX ?? 'unrestricted',
  );
  for (const row of cpu)
    console.log(`${row.name}: ${row.hostCpuMs.toFixed(1)} ms (${row.programs} programs)`);
  for (const line of roundTripComparison(trips)) console.log(line);
}
