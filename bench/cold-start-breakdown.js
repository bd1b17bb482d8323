// Where a cold start goes: spawn a Node → first result of `1` in a QuickJS session in the native
// sandbox, split with performance.now() marks (the parent's spawn and the child's marks on one
// clock, performance.timeOrigin + now()), then the host's own start measured alone. Nothing here
// is in library code. Run after `pnpm build` from bench/ (the application whose dependencies name
// the sandbox packages), with the Node to measure, such as
// `cd bench && node ../scripts/lts-node.mjs run cold-start-breakdown.js [runs]`; it prints medians.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const now = () => performance.timeOrigin + performance.now();
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** In the measured child: the steps of a cold start, as absolute times. */
async function coldChild() {
  const marks = { nodeStarted: now() };
  const { default: Type } = await import('typebox');
  const { defineTool } = await import('@ghost/core');
  const { openCodeModeSession } = await import('@ghost/code-mode');
  const { quickjsEngine } = await import('@ghost/engine-quickjs');
  marks.imported = now();
  const noop = defineTool({
    name: 'noop',
    description: 'Does nothing.',
    input: Type.Object({}),
    execute: () => null,
  });
  marks.toolDefined = now();
  const opened = await openCodeModeSession({ engine: quickjsEngine, sandbox: 'native', tools: [noop] });
  marks.opened = now();
  const result = await opened.session.execute('1');
  marks.firstResult = now();
  if (result.status !== 'completed' || result.value !== 1)
    throw new Error(`bench program failed: ${result.error}`);
  process.stdout.write(`${JSON.stringify(marks)}\n`);
  await opened.close();
}

/** Spawns the child, resolves to its marks beside the spawn time. */
function coldRun() {
  return new Promise((resolve, reject) => {
    const spawnedAt = now();
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), 'child'], {
      cwd: here,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    let firstLineAt;
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      if (firstLineAt === undefined && stdout.includes('\n')) firstLineAt = now();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`cold-start child exited ${code}`));
      resolve({ spawnedAt, seenAt: firstLineAt, ...JSON.parse(stdout.split('\n')[0]) });
    });
  });
}

/** Spawns `node args` with fd 3 a pipe; resolves to milliseconds until its first bytes on fd 3. */
function untilFirstFrame(args) {
  return new Promise((resolve, reject) => {
    const startedAt = performance.now();
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe', 'pipe'], env: {} });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.stdio[3].once('data', () => {
      resolve(performance.now() - startedAt);
      child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal !== 'SIGKILL')
        reject(new Error(`host exited (${code ?? signal}) before a frame: ${stderr}`));
    });
  });
}

/** Milliseconds for `node args` to start and exit. */
function untilExit(args) {
  return new Promise((resolve, reject) => {
    const startedAt = performance.now();
    const child = spawn(process.execPath, args, { stdio: 'ignore' });
    child.on('error', reject);
    child.on('exit', () => resolve(performance.now() - startedAt));
  });
}

/** The host's start alone, outside the sandbox, with the engine's own command line. */
async function hostAlone(runs) {
  const engineRoot = dirname(fileURLToPath(import.meta.resolve('@ghost/engine-quickjs/package.json')));
  const { quickjsEngine } = await import('@ghost/engine-quickjs');
  const permission =
    Number(process.versions.node.split('.')[0]) >= 22 ? '--permission' : '--experimental-permission';
  const paths = quickjsEngine.runtimePaths.map((path) => `--allow-fs-read=${path}`);
  // The engine's V8 flags for its hosts (engine-quickjs/src/host-start.ts).
  const host = [permission, ...paths, '--no-warnings', '--liftoff-only', join(engineRoot, 'dist/host.cjs')];
  const rows = {
    'node -e 0': [],
    'host → hello, no rehearsal': [],
    'host → hello, rehearsed (a spare)': [],
  };
  for (let run = 0; run < runs; run += 1) {
    rows['node -e 0'].push(await untilExit(['-e', '0']));
    rows['host → hello, no rehearsal'].push(await untilFirstFrame([...host, '--ghost-no-rehearsal']));
    rows['host → hello, rehearsed (a spare)'].push(await untilFirstFrame(host));
  }
  return Object.entries(rows).map(([name, values]) => [name, median(values)]);
}

/** Cold exec of `1` with no spare, in bubblewrap and outside it: what the sandbox adds to a host start. */
async function sandboxCost(runs) {
  const { openCodeModeSession } = await import('@ghost/code-mode');
  const { quickjsEngine } = await import('@ghost/engine-quickjs');
  const rows = [];
  for (const sandbox of ['unrestricted', 'native']) {
    const opened = await openCodeModeSession({ engine: quickjsEngine, sandbox, prewarm: false });
    const samples = [];
    try {
      await opened.session.execute('1');
      for (let run = 0; run < runs; run += 1) {
        const startedAt = performance.now();
        await opened.session.execute('1');
        samples.push(performance.now() - startedAt);
      }
    } finally {
      await opened.close();
    }
    rows.push([`exec of \`1\`, host started for it (${sandbox})`, median(samples)]);
  }
  return rows;
}

if (process.argv[2] === 'child') {
  await coldChild();
} else {
  const runs = Number(process.argv[2] ?? 7);
  const samples = [];
  await coldRun(); // the first run may fill the sandbox detection's cache
  for (let run = 0; run < runs; run += 1) samples.push(await coldRun());
  const steps = [
    ['spawn → Node runs the first line', (s) => s.nodeStarted - s.spawnedAt],
    ['imports (typebox, core, code-mode, engine-quickjs)', (s) => s.imported - s.nodeStarted],
    ['define a tool', (s) => s.toolDefined - s.imported],
    ['open the session (cached detection, host launched)', (s) => s.opened - s.toolDefined],
    ['first exec of `1` (waits for the host)', (s) => s.firstResult - s.opened],
    ['spawn → first result (child clock)', (s) => s.firstResult - s.spawnedAt],
    ['spawn → first result seen by the parent', (s) => s.seenAt - s.spawnedAt],
  ];
  console.log(`Cold start on Node ${process.version}, ${runs} runs, medians (ms):`);
  for (const [name, of] of steps) console.log(`  ${name}: ${median(samples.map(of)).toFixed(1)}`);
  const rows = await hostAlone(runs);
  console.log('The host alone, outside the sandbox:');
  for (const [name, value] of rows) console.log(`  ${name}: ${value.toFixed(1)}`);
  console.log('What the sandbox adds:');
  for (const [name, value] of await sandboxCost(runs)) console.log(`  ${name}: ${value.toFixed(1)}`);
}
