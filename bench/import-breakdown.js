// What importing each system costs a fresh Node process: the modules the ES loader loads, their
// bytes, and the wall and CPU time of the imports (medians of interleaved runs, every run a fresh
// Node: import-child.js). A schema library is counted apart from the system that brings it (zod
// for the AI SDK's and UTCP's code mode; typebox is the application's own for Ghost and is
// measured alone). Where Node has a compile cache (22.1 and later), Ghost is measured again with
// NODE_COMPILE_CACHE pointing at a cache filled by an earlier run. The peers need Node 22 or later
// and bench/peers.js's install; without them only Ghost's rows are printed.
// Alone: `node bench/import-breakdown.js [runs]` (peers: GHOST_BENCH_PEERS_DIR, set by peers.js).
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './round-trip-floor.js';

const here = dirname(fileURLToPath(import.meta.url));
const child = join(here, 'import-child.js');

/** The systems, each a list of specifiers imported in turn; `schema` names the schema library counted apart. */
const ghost = ['@ghost/core', '@ghost/code-mode', '@ghost/engine-quickjs'];
const subjects = [
  { name: 'Ghost: core + code-mode + engine-quickjs', specifiers: ghost },
  { name: 'typebox (the application schema library)', specifiers: ['typebox'] },
  {
    name: '@ai-sdk/code-mode + ai',
    specifiers: ['peer:@ai-sdk/code-mode', 'peer:ai'],
    schema: 'zod',
    peer: true,
  },
  {
    name: '@utcp/code-mode + @utcp/sdk',
    specifiers: ['peer:@utcp/code-mode', 'peer:@utcp/sdk'],
    schema: 'zod',
    peer: true,
  },
  { name: 'zod alone (as the AI SDK resolves it)', specifiers: ['peer:zod'], peer: true },
];

function runChild(specifiers, { env = {}, list } = {}) {
  const args =
    list === undefined
      ? [child, ...specifiers]
      : ['--import', join(here, 'module-count.js'), child, ...specifiers];
  return new Promise((resolve, reject) => {
    const process_ = spawn(process.execPath, args, {
      cwd: here,
      env: { ...process.env, ...env, ...(list === undefined ? {} : { GHOST_BENCH_MODULE_LIST: list }) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    process_.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    process_.stderr.on('data', (chunk) => {
      if (stderr.length < 16_384) stderr += chunk;
    });
    process_.on('error', reject);
    process_.on('close', (code) => {
      if (code !== 0)
        reject(new Error(`import of ${specifiers.join(' ')} failed (${code}): ${stderr.slice(-400)}`));
      else resolve(JSON.parse(stdout.trim().split('\n').at(-1)));
    });
  });
}

/** The modules a fresh import loads, their bytes, and the part of both in `schema`'s package. */
async function countModules(specifiers, schema, env) {
  const directory = await mkdtemp(join(tmpdir(), 'ghost-bench-imports-'));
  try {
    const list = join(directory, 'modules.txt');
    await runChild(specifiers, { list, env });
    // The child script itself is the bench's, not the system's.
    const urls = [
      ...new Set(
        (await readFile(list, 'utf8'))
          .split('\n')
          .filter((url) => url.startsWith('file:') && !url.endsWith('/bench/import-child.js')),
      ),
    ];
    const counts = { modules: 0, bytes: 0, schemaModules: 0, schemaBytes: 0 };
    for (const url of urls) {
      const bytes = (await stat(fileURLToPath(url))).size;
      counts.modules += 1;
      counts.bytes += bytes;
      if (schema !== undefined && url.includes(`/node_modules/${schema}/`)) {
        counts.schemaModules += 1;
        counts.schemaBytes += bytes;
      }
    }
    return counts;
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

const hasCompileCache = () => {
  const [major, minor] = process.versions.node.split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 1);
};

/**
 * Rows `{ name, modules, bytes, schemaModules, schemaBytes, wallMs, cpuMs }` (medians of `runs`),
 * with the peers where `peersDirectory` is given and this Node can run them.
 */
export async function importBreakdownFigures(runs = 7, peersDirectory = process.env.GHOST_BENCH_PEERS_DIR) {
  const canRunPeers = peersDirectory !== undefined && Number(process.versions.node.split('.')[0]) >= 22;
  const env = canRunPeers ? { GHOST_BENCH_PEERS_DIR: peersDirectory } : {};
  const chosen = subjects.filter((subject) => canRunPeers || !subject.peer);
  const cacheDirectory = hasCompileCache()
    ? await mkdtemp(join(tmpdir(), 'ghost-bench-compile-cache-'))
    : undefined;
  if (cacheDirectory !== undefined)
    chosen.push({
      name: 'Ghost, with NODE_COMPILE_CACHE filled',
      specifiers: ghost,
      env: { NODE_COMPILE_CACHE: cacheDirectory },
    });
  try {
    const samples = new Map(chosen.map((subject) => [subject, { wall: [], cpu: [] }]));
    // One untimed run each: fills the OS file cache (and the compile cache) for every system alike.
    for (const subject of chosen) await runChild(subject.specifiers, { env: { ...env, ...subject.env } });
    for (let run = 0; run < runs; run += 1) {
      for (const subject of chosen) {
        const figures = await runChild(subject.specifiers, { env: { ...env, ...subject.env } });
        samples.get(subject).wall.push(figures.wallMs);
        samples.get(subject).cpu.push(figures.cpuMs);
      }
    }
    const rows = [];
    for (const subject of chosen) {
      const counts = await countModules(subject.specifiers, subject.schema, { ...env, ...subject.env });
      const { wall, cpu } = samples.get(subject);
      rows.push({ name: subject.name, ...counts, wallMs: median(wall), cpuMs: median(cpu) });
    }
    return rows;
  } finally {
    if (cacheDirectory !== undefined) await rm(cacheDirectory, { recursive: true, force: true });
  }
}

/** Lines for the rows, and Ghost's import beside UTCP's (the target: at most 1.4×). */
export function formatImportBreakdown(rows) {
  const lines = [`imports on Node ${process.version} (fresh process each, medians):`];
  for (const row of rows) {
    const schema =
      row.schemaModules > 0
        ? ` (of which zod ${row.schemaModules} modules, ${(row.schemaBytes / 1024).toFixed(0)} KiB)`
        : '';
    lines.push(
      `  ${row.name}: ${row.wallMs.toFixed(1)} ms wall, ${row.cpuMs.toFixed(1)} ms CPU, ${row.modules} modules, ${(row.bytes / 1024).toFixed(0)} KiB${schema}`,
    );
  }
  const ghostRow = rows.find((row) => row.name.startsWith('Ghost:'));
  const utcp = rows.find((row) => row.name.startsWith('@utcp'));
  if (ghostRow && utcp)
    lines.push(
      `  Ghost's import / UTCP's (zod included): ${(ghostRow.wallMs / utcp.wallMs).toFixed(2)}× wall, ${(ghostRow.cpuMs / utcp.cpuMs).toFixed(2)}× CPU (target ≤ 1.4×; CPU is the steadier figure on a loaded machine)`,
    );
  return lines;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows = await importBreakdownFigures(Number(process.argv[2]) || 7);
  for (const line of formatImportBreakdown(rows)) console.log(line);
}
