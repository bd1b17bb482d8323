import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { detectCgroups } from './cgroups.js';
import { findExecutable } from './find-executable.js';
import type { BwrapStartFacts, BwrapStartStep } from './start-steps.js';
import { builtEntry, builtKit, isBuildCurrent } from './test-support/built-packages.js';

// The parent here is a child Node process running the built packages, as an application would;
// the test kills it with SIGKILL at one step of starting a sandbox and then looks for anything
// the start made: processes, cgroups, the workspace.
const hasBwrap = (await findExecutable('bwrap')) !== undefined;
const cgroups = hasBwrap ? await detectCgroups() : undefined;
const skipReason = !hasBwrap
  ? 'bubblewrap is not installed here'
  : !isBuildCurrent()
    ? "dist/ (this package's or @ghost/core's) is older than src/ or missing: run pnpm build (pnpm test builds first)"
    : undefined;
const skipped = skipReason === undefined ? '' : ` (skipped: ${skipReason})`;

/** Every step of a start, in order: the workspace before the backend's own, the running program after. */
const steps: readonly (BwrapStartStep | 'workspace made' | 'program running')[] = [
  'workspace made',
  'cgroups made',
  'launcher started',
  'launcher registered',
  'bubblewrap starting',
  'sandbox started',
  'program running',
];

/**
 * The dying parent: makes a workspace and starts a sandbox with cgroup limits where this machine
 * has cgroups, and at `step` prints what the start made and blocks until it is killed.
 */
const parentScript = `
import { writeSync } from 'node:fs';
const [entry, kit, step, marker, root, node, limits] = process.argv.slice(1);
const { createBwrapSandbox } = await import(entry);
const { createSandboxWorkspace } = await import(kit);
const stop = (reached, facts) => {
  writeSync(1, JSON.stringify({ step: reached, facts }) + '\\n');
  // Nothing more of this process runs until the test kills it.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
};
let made;
globalThis[Symbol.for('ghost.sandbox-bwrap.start-step')] = (reached, facts) => {
  made = facts;
  if (reached === step) stop(reached, facts);
};
const backend = createBwrapSandbox();
await backend.detect();
const workspace = await createSandboxWorkspace({ root, prefix: 'ghost-dying-parent-' });
if (step === 'workspace made') stop(step, { workspace, cgroups: [] });
const child = await backend.spawn({
  command: node,
  args: ['-e', 'process.stdout.write("ready"); setInterval(() => {}, 1000)', marker],
  env: {},
  runtimePaths: [],
  workspace,
  limits: JSON.parse(limits),
});
while (!child.stdout.text.includes('ready')) await new Promise((resolve) => setTimeout(resolve, 5));
stop('program running', { ...made, launcherPid: child.pid });
`;

/** The live processes (zombies left out: they run nothing) whose command line contains `text`. */
function processesWith(text: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (!readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(text)) continue;
      if (isRunning(Number(entry))) found.push(Number(entry));
    } catch {
      // Ended while we looked.
    }
  }
  return found;
}

function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** The reaper the parent started: its child running the reaper script. */
function reaperOf(parent: number): number | undefined {
  return processesWith('ghost-sandbox-reaper').find((pid) => {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent;
  });
}

/** What is left of the start, polled until nothing is or 10 s passed. */
async function leftovers(facts: BwrapStartFacts, marker: string, reaper: number | undefined) {
  const look = () => ({
    processes: processesWith(marker),
    launcher: facts.launcherPid !== undefined && isRunning(facts.launcherPid) ? [facts.launcherPid] : [],
    reaper: reaper !== undefined && isRunning(reaper) ? [reaper] : [],
    cgroups: facts.cgroups.filter((directory) => existsSync(directory)),
    workspace: existsSync(facts.workspace) ? [facts.workspace] : [],
  });
  const deadline = Date.now() + 10_000;
  let left = look();
  while (Object.values(left).some((list) => list.length > 0) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    left = look();
  }
  return left;
}

describe('a parent killed while a sandbox starts', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  for (const step of steps) {
    it.skipIf(skipReason !== undefined)(
      `leaves no process, cgroup or workspace when SIGKILL comes at '${step}'${skipped}`,
      async () => {
        const root = await mkdtemp(join(tmpdir(), 'ghost-dying-parent-'));
        cleanups.push(() => rm(root, { recursive: true, force: true }));
        const marker = `ghost-dying-parent-marker-${process.pid}-${steps.indexOf(step)}-${Date.now()}`;
        const limits = {
          ...(cgroups?.memoryParent === undefined ? {} : { memoryBytes: 512 * 1024 * 1024 }),
          ...(cgroups?.pidsParent === undefined ? {} : { processes: 64 }),
          wallSeconds: 60,
        };
        const parent: ChildProcess = spawn(
          process.execPath,
          [
            '--input-type=module',
            '-e',
            parentScript,
            builtEntry,
            builtKit,
            step,
            marker,
            root,
            realpathSync(process.execPath),
            JSON.stringify(limits),
          ],
          { stdio: ['ignore', 'pipe', 'pipe'] },
        );
        cleanups.push(() => parent.kill('SIGKILL'));
        let stderr = '';
        parent.stderr?.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
        });
        const line = await new Promise<string>((resolve, reject) => {
          let stdout = '';
          parent.stdout?.on('data', (chunk: Buffer) => {
            stdout += chunk.toString();
            if (stdout.includes('\n')) resolve(stdout.slice(0, stdout.indexOf('\n')));
          });
          parent.once('exit', (code) =>
            reject(new Error(`the parent exited (${code}) before the step: ${stderr}`)),
          );
        });
        const { facts } = JSON.parse(line) as { step: string; facts: BwrapStartFacts };
        const reaper = reaperOf(parent.pid as number);
        expect(reaper, 'the parent has a reaper by then').toBeDefined();
        if (step !== 'workspace made' && limits.memoryBytes !== undefined) {
          expect(facts.cgroups.length, 'the start made its cgroups').toBeGreaterThan(0);
        }
        const exited = new Promise((resolve) => parent.once('exit', resolve));
        parent.kill('SIGKILL');
        await exited;

        const left = await leftovers(facts, marker, reaper);
        expect(left).toEqual({ processes: [], launcher: [], reaper: [], cgroups: [], workspace: [] });
        expect(await readdir(root), 'the workspace root').toEqual([]);
      },
    );
  }
});
