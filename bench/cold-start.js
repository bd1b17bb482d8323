// Cold-start figures: what a CLI run, a serverless cold start or a test file pays before its first
// result. Every sample is a fresh Node (cold-start-child.js) loading the built `dist` packages as a
// user would; the median and p90 of several runs are reported. A counting run (not timed) lists the
// modules each step loads, and how many copies of typebox they come from.
// Run alone with `node bench/cold-start.js [runs]` after `pnpm build`.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const child = join(here, 'cold-start-child.js');

/**
 * Runs one step in a fresh Node; resolves to the child's figures, the parent's milliseconds from
 * spawn to the first line of output, and (when `countModules`) the modules it loaded.
 */
async function runChild(step, { countModules = false, env = {} } = {}) {
  const listDirectory = countModules ? await mkdtemp(join(tmpdir(), 'ghost-bench-modules-')) : undefined;
  const list = listDirectory === undefined ? undefined : join(listDirectory, 'modules.txt');
  const args = list === undefined ? [child, step] : ['--import', join(here, 'module-count.js'), child, step];
  try {
    const startedAt = performance.now();
    const process_ = spawn(process.execPath, args, {
      cwd: here,
      env: { ...process.env, ...env, ...(list === undefined ? {} : { GHOST_BENCH_MODULE_LIST: list }) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let firstLineMs;
    process_.stdout.on('data', (chunk) => {
      stdout += chunk;
      if (firstLineMs === undefined && stdout.includes('\n')) firstLineMs = performance.now() - startedAt;
    });
    process_.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const code = await new Promise((resolve, reject) => {
      process_.on('error', reject);
      process_.on('close', resolve);
    });
    if (code !== 0) throw new Error(`cold-start step ${step} failed (${code}): ${stderr}`);
    const figures = JSON.parse(stdout.split('\n')[0]);
    const modules =
      list === undefined ? undefined : (await readFile(list, 'utf8')).split('\n').filter(Boolean);
    return { figures, firstLineMs, modules };
  } finally {
    if (listDirectory !== undefined) await rm(listDirectory, { recursive: true, force: true });
  }
}

function summarise(name, samples) {
  const sorted = [...samples].sort((left, right) => left - right);
  const at = (fraction) => sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))];
  return { name, runs: sorted.length, median: at(0.5), p90: at(0.9) };
}

/** `count modules (n from m typebox copies)` for a counting run's list. */
function formatModules(modules) {
  const typeboxRoots = new Set();
  let typeboxModules = 0;
  for (const url of modules) {
    const match = /^(.*\/node_modules\/typebox)\//.exec(url);
    if (match === null) continue;
    typeboxModules += 1;
    typeboxRoots.add(match[1]);
  }
  return `${modules.length} modules, ${typeboxModules} of them typebox's (${typeboxRoots.size} ${typeboxRoots.size === 1 ? 'copy' : 'copies'})`;
}

/**
 * @param {{ runs?: number }} [options]
 * @returns {Promise<{ results: object[], modules: string[] }>}
 */
export async function coldStartFigures({ runs = 9 } = {}) {
  const samples = new Map();
  const record = (name, value) => {
    if (!samples.has(name)) samples.set(name, []);
    samples.get(name).push(value);
  };
  const stepNames = {
    'import-core': 'cold start: import @ghost/core',
    'import-code-mode': 'cold start: import core + code-mode + engine-quickjs',
  };
  // Interleaved, so a burst of load on the machine spreads over every figure instead of one.
  for (let run = 0; run < runs; run += 1) {
    for (const [step, name] of Object.entries(stepNames)) {
      record(name, (await runChild(step)).figures.import);
    }
    const tool = (await runChild('tool')).figures;
    record('cold start: import typebox + core, define a tool', tool.defined);
    record('cold start: … and validate its first input', tool.validated);
    const cached = await runChild('session');
    record('cold start: open a QuickJS session in bwrap (detection cached)', cached.figures.open);
    record('cold start: first exec of `1` in it (host started by the open)', cached.figures.firstExec);
    record('cold start: spawn → first result, bwrap (detection cached)', cached.firstLineMs);
    const uncached = await runChild('session', { env: { GHOST_SANDBOX_DETECTION_CACHE: 'off' } });
    record('cold start: open a QuickJS session in bwrap (cache off)', uncached.figures.open);
    record('cold start: spawn → first result, bwrap (cache off)', uncached.firstLineMs);
  }
  const modules = [];
  for (const step of ['import-core', 'import-code-mode', 'tool']) {
    const counted = await runChild(step, { countModules: true });
    modules.push(`${step}: ${formatModules(counted.modules)}`);
  }
  return { results: [...samples].map(([name, values]) => summarise(name, values)), modules };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { printTable } = await import('./measure.js');
  const runs = process.argv[2] === undefined ? undefined : Number(process.argv[2]);
  const { results, modules } = await coldStartFigures(runs === undefined ? {} : { runs });
  console.log(`Ghost cold start on Node ${process.version}, ${new Date().toISOString()}`);
  printTable(results);
  for (const line of modules) console.log(`modules loaded by ${line}`);
}
