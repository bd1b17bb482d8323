// `pnpm bench:peers`: Ghost beside `@ai-sdk/code-mode` and `@utcp/code-mode`, one run, the same
// figures, printed side by side with ratios. The peers need Node 22 or later, so this runs under
// the current LTS that scripts/lts-node.mjs installs in a cache folder (started through it when
// run on an older Node.js), and the peers are installed at the versions pinned in
// bench/peers/package-lock.json into a cache folder of their own, so nothing of theirs reaches the
// workspace. Every figure of every system is measured in a fresh Node (bench/peers-child.js).
// After the table: the round trip's floor on this machine (round-trip-floor.js) with each
// system's round trip beside it, and what importing each system loads (import-breakdown.js).
// Figures and the machine they came from: docs/decisions/2026-12-05-peer-bench.md.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { cpus, homedir, loadavg, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const ltsScript = join(here, '..', 'scripts', 'lts-node.mjs');
const minimumMajor = 22;

/**
 * Installs bench/peers (package.json and its lockfile) with `npm ci` into
 * `~/.cache/ghost/bench-peers/<digest of both>`, once; returns that folder. npm runs with this
 * Node.js first on PATH, so install scripts (isolated-vm's) pick the addon built for it.
 */
async function installPeers() {
  const manifest = await readFile(join(here, 'peers', 'package.json'));
  const lockfile = await readFile(join(here, 'peers', 'package-lock.json'));
  const digest = createHash('sha256').update(manifest).update(lockfile).digest('hex').slice(0, 16);
  const root = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'ghost', 'bench-peers');
  const folder = join(root, digest);
  const marker = join(folder, '.installed');
  if (existsSync(marker)) return folder;
  await mkdir(root, { recursive: true });
  const staging = await mkdtemp(join(root, '.staging-'));
  try {
    await copyFile(join(here, 'peers', 'package.json'), join(staging, 'package.json'));
    await copyFile(join(here, 'peers', 'package-lock.json'), join(staging, 'package-lock.json'));
    process.stderr.write(`peers: installing bench/peers into ${folder}\n`);
    execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: staging,
      stdio: ['ignore', 2, 2],
      env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH}` },
    });
    await writeFile(join(staging, '.installed'), `${new Date().toISOString()}\n`);
    await rm(folder, { recursive: true, force: true });
    await rename(staging, folder);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return folder;
}

/**
 * Runs `peers-child.js <system> <figure>`; resolves to the figures it printed (its last JSON
 * line: a peer may log to stdout) and the milliseconds from spawn to its first JSON line.
 */
function runChild(system, figure, peersDirectory) {
  return new Promise((resolve, reject) => {
    const startedAt = performance.now();
    const child = spawn(process.execPath, [join(here, 'peers-child.js'), system, figure], {
      cwd: here,
      env: { ...process.env, GHOST_BENCH_PEERS_DIR: peersDirectory },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let firstResultMs;
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      if (firstResultMs === undefined && /^\{.*\}$/m.test(stdout))
        firstResultMs = performance.now() - startedAt;
    });
    child.stderr.on('data', (chunk) => {
      // Bounded: a runaway peer's diagnostics must not grow this process without end.
      if (stderr.length < 64 * 1024) stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const line = stdout
        .split('\n')
        .filter((text) => text.startsWith('{'))
        .at(-1);
      if (code !== 0 || line === undefined) {
        resolve({
          failed: `exit ${code ?? signal}: ${stderr.trim().split('\n').slice(-3).join(' | ').slice(0, 300)}`,
        });
        return;
      }
      resolve({ figures: JSON.parse(line), firstResultMs });
    });
  });
}

const median = (samples) => {
  const sorted = [...samples].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)];
};

const formatMs = (value) =>
  value === undefined
    ? '—'
    : value < 1
      ? `${(value * 1000).toFixed(0)} µs`
      : `${value.toFixed(value < 10 ? 2 : 1)} ms`;

async function main() {
  const peersDirectory = await installPeers();
  const systems = [
    'ghost-quickjs',
    'ghost-quickjs-session',
    'ghost-quickjs-thread',
    ...(process.env.GHOST_TEST_ISOLATED_VM_FROM ? ['ghost-v8'] : []),
    'ai-sdk',
    'utcp',
  ];
  const labels = {
    'ghost-quickjs': 'Ghost QuickJS/bwrap',
    'ghost-quickjs-session': 'Ghost QuickJS session',
    'ghost-quickjs-thread': 'Ghost QuickJS thread',
    'ghost-v8': 'Ghost V8/bwrap',
    'ai-sdk': '@ai-sdk/code-mode',
    utcp: '@utcp/code-mode',
  };
  const coldRuns = Number(process.env.GHOST_BENCH_COLD_RUNS ?? 7);
  /** system → figure name → value (or a string saying why there is none). */
  const table = new Map(systems.map((system) => [system, new Map()]));
  const cold = new Map(systems.map((system) => [system, []]));
  // Interleaved, so a burst of load on the shared machine spreads over every system.
  for (let run = 0; run < coldRuns; run += 1) {
    for (const system of systems) {
      const outcome = await runChild(system, 'cold', peersDirectory);
      if (outcome.failed) table.get(system).set('cold start (spawn → first result)', outcome.failed);
      else cold.get(system).push(outcome.firstResultMs);
    }
  }
  for (const system of systems) {
    const row = table.get(system);
    if (cold.get(system).length > 0) row.set('cold start (spawn → first result)', median(cold.get(system)));
    for (const figure of ['warm', 'throughput', 'spin', 'bomb']) {
      process.stderr.write(`peers: ${labels[system]}: ${figure}\n`);
      const outcome = await runChild(system, figure, peersDirectory);
      if (outcome.failed) {
        row.set(figure, outcome.failed);
        continue;
      }
      const figures = outcome.figures;
      if (figure === 'warm') {
        row.set('warm exec of `1`', median(figures.warm));
        row.set(
          'tool round trip (100 sequential calls)',
          (median(figures.seq100) - median(figures.oneForSeq)) / 100,
        );
        row.set(
          'tool round trip (1000 sequential calls)',
          typeof figures.seq1000 === 'string'
            ? figures.seq1000
            : (median(figures.seq1000) - median(figures.oneForSeq)) / 1000,
        );
        row.set('64-way fan-out program', median(figures.fan64));
        row.set('resident memory, process tree (MiB)', figures.residentMiB);
      } else if (figure === 'throughput') {
        row.set('programs/s, 1 in flight', figures.perSecond1);
        row.set('programs/s, 4 in flight', figures.perSecond4);
      } else {
        row.set(`${figure === 'spin' ? 'CPU spin' : 'memory bomb'} at defaults`, figures[figure]);
      }
    }
  }
  print(systems, labels, table);
  // Ghost's own packages are loaded only here: under an older Node.js this file only restarts itself.
  const { formatRoundTripFloor, roundTripFloorFigures } = await import('./round-trip-floor.js');
  const { formatImportBreakdown, importBreakdownFigures } = await import('./import-breakdown.js');
  process.stderr.write('peers: round-trip floor\n');
  const floor = await roundTripFloorFigures({ runs: 3 });
  for (const line of formatRoundTripFloor(floor)) console.log(line);
  printFloorRatios(systems, labels, table, floor.rows);
  process.stderr.write('peers: imports\n');
  for (const line of formatImportBreakdown(await importBreakdownFigures(coldRuns, peersDirectory)))
    console.log(line);
}

/**
 * Each system's round trip of the table beside the floor measured in the same run, then issue 34's
 * round-trip targets from the 1000-call figure, the same method for every system: Ghost's session
 * placement against the best in-process peer, and its process placement against its session.
 */
function printFloorRatios(systems, labels, table, floorRows) {
  const floor =
    floorRows.find((row) => row.name === 'floor, bwrap, codec') ??
    floorRows.find((row) => row.name === 'floor, plain, codec');
  if (floor === undefined) return;
  for (const figure of [
    'tool round trip (100 sequential calls)',
    'tool round trip (1000 sequential calls)',
  ]) {
    const cells = [];
    for (const system of systems) {
      const value = table.get(system).get(figure);
      if (typeof value === 'number')
        cells.push(`${labels[system]} ${formatMs(value)} (${((value * 1000) / floor.median).toFixed(2)}×)`);
    }
    console.log(
      `${figure} beside the floor (${floor.name}, ${floor.median.toFixed(0)} µs): ${cells.join('; ')}`,
    );
  }
  const figure = 'tool round trip (1000 sequential calls)';
  const of = (system) => table.get(system)?.get(figure);
  const session = of('ghost-quickjs-session');
  const process_ = of('ghost-quickjs');
  const peers = systems
    .filter((system) => !system.startsWith('ghost'))
    .filter((system) => typeof of(system) === 'number');
  const best = peers.sort((left, right) => of(left) - of(right))[0];
  if (typeof session === 'number' && best !== undefined) {
    console.log(
      `round trip, 1000 calls: Ghost session ${formatMs(session)} / best peer (${labels[best]}) ${formatMs(of(best))} = ${(session / of(best)).toFixed(2)}× (target ≤ 1.0×)`,
    );
  }
  const thread = of('ghost-quickjs-thread');
  if (typeof thread === 'number' && best !== undefined) {
    console.log(
      `round trip, 1000 calls, without the process boundary: Ghost thread (no OS sandbox) ${formatMs(thread)} / ${labels[best]} ${formatMs(of(best))} = ${(thread / of(best)).toFixed(2)}×`,
    );
  }
  if (typeof session === 'number' && typeof process_ === 'number') {
    console.log(
      `round trip, 1000 calls: Ghost process ${formatMs(process_)} / Ghost session ${formatMs(session)} = ${(process_ / session).toFixed(2)}× (target ≤ 1.5×)`,
    );
  }
}

function print(systems, labels, table) {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  console.log(
    `Ghost and its peers on Node ${process.version}, ${new Date().toISOString()}: ${cpu}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, load ${loadavg()
      .map((value) => value.toFixed(1))
      .join(' ')}`,
  );
  const figureNames = [...new Set(systems.flatMap((system) => [...table.get(system).keys()]))];
  const higherIsBetter = (name) => name.startsWith('programs/s');
  const format = (name, value) => {
    if (value === undefined) return '—';
    if (typeof value === 'string') return `failed (${value.slice(0, 60)})`;
    if (typeof value === 'object')
      return `${value.seconds.toFixed(1)} s, ${value.recovers ? 'recovers' : 'does NOT recover'}`;
    if (name.includes('MiB')) return `${value.toFixed(0)} MiB`;
    if (higherIsBetter(name)) return value.toFixed(1);
    return formatMs(value);
  };
  const width = Math.max(...figureNames.map((name) => name.length));
  const columnWidth = 24;
  console.log(
    `${'figure'.padEnd(width)}  ${systems.map((system) => labels[system].padStart(columnWidth)).join('  ')}`,
  );
  for (const name of figureNames) {
    const cells = systems.map((system) => format(name, table.get(system).get(name)).padStart(columnWidth));
    console.log(`${name.padEnd(width)}  ${cells.join('  ')}`);
  }
  // Ratios: how many times better Ghost (QuickJS in bwrap) is, per peer (above 1: Ghost leads).
  const ghost = table.get('ghost-quickjs');
  for (const peer of systems.filter((system) => !system.startsWith('ghost'))) {
    const ratios = [];
    for (const name of figureNames) {
      const mine = ghost.get(name);
      const theirs = table.get(peer).get(name);
      if (typeof mine !== 'number' || typeof theirs !== 'number' || mine === 0 || theirs === 0) continue;
      const ratio = higherIsBetter(name) ? mine / theirs : theirs / mine;
      ratios.push(`${name}: ${ratio.toFixed(2)}×`);
    }
    console.log(`Ghost QuickJS/bwrap vs ${labels[peer]} (above 1: Ghost better): ${ratios.join('; ')}`);
  }
  for (const system of systems) {
    for (const name of ['CPU spin at defaults', 'memory bomb at defaults']) {
      const value = table.get(system).get(name);
      if (value && typeof value === 'object') console.log(`${labels[system]}, ${name}: ${value.ended}`);
    }
  }
  const ghostCold = ghost.get('cold start (spawn → first result)');
  const fastestPeer = Math.min(
    ...systems
      .filter((system) => !system.startsWith('ghost'))
      .map((system) => table.get(system).get('cold start (spawn → first result)'))
      .filter((value) => typeof value === 'number'),
  );
  if (typeof ghostCold === 'number' && Number.isFinite(fastestPeer)) {
    console.log(
      `cold start: Ghost QuickJS/bwrap ${formatMs(ghostCold)}, fastest peer ${formatMs(fastestPeer)}: ${ghostCold <= fastestPeer ? 'no slower' : `${(ghostCold / fastestPeer).toFixed(2)}× slower`}`,
    );
  }
}

if (Number(process.versions.node.split('.')[0]) < minimumMajor) {
  // The peers refuse this Node.js: run again under the LTS from the cache.
  const child = spawn(
    process.execPath,
    [ltsScript, 'run', fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    {
      stdio: 'inherit',
    },
  );
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
} else {
  await main();
}
