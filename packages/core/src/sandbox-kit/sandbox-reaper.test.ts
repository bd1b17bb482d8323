import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { reaperScript, reapOnParentDeath } from './sandbox-reaper.js';

const isLinux = process.platform === 'linux';
const linuxOnly = isLinux
  ? ''
  : ' (skipped: processes are told apart by their start time in /proc, which only Linux has)';

/** Whether the process runs anything: not gone, and not a zombie waiting to be reaped. */
function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

function startTime(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] as string;
}

/** The pids below `pid`, through each thread's children file. */
function descendants(pid: number): number[] {
  const found: number[] = [];
  const pending = [pid];
  while (pending.length > 0) {
    const next = pending.pop() as number;
    let threads: string[] = [];
    try {
      threads = readdirSync(`/proc/${next}/task`);
    } catch {
      continue;
    }
    for (const thread of threads) {
      let children = '';
      try {
        children = readFileSync(`/proc/${next}/task/${thread}/children`, 'utf8').trim();
      } catch {
        // The thread ended while we looked.
      }
      for (const child of children.split(/\s+/).filter(Boolean)) {
        found.push(Number(child));
        pending.push(Number(child));
      }
    }
  }
  return found;
}

async function waitFor(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting until ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('the sandbox reaper', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function scratch(): Promise<string> {
    const directory = await mkdtemp(join(tmpdir(), 'ghost-reaper-test-'));
    cleanups.push(() => rm(directory, { recursive: true, force: true }));
    return directory;
  }

  /** A process tree as a sandbox's launcher leaves it: a parent with a child that has children. */
  async function processTree(): Promise<ChildProcess> {
    const tree = spawn('/bin/sh', ['-c', 'sh -c "sleep 600 & sleep 600 & wait" & sleep 600 & wait'], {
      detached: true,
      stdio: 'ignore',
    });
    cleanups.push(() => {
      for (const pid of [tree.pid as number, ...descendants(tree.pid as number)]) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Gone already: what the test wanted.
        }
      }
    });
    await waitFor(() => descendants(tree.pid as number).length === 4, 'the tree has started');
    return tree;
  }

  it.skipIf(!isLinux)(
    `ends what is registered once its input ends, as when the parent dies: the whole process tree, then the directories; nothing released and no other process is touched${linuxOnly}`,
    async () => {
      const root = await scratch();
      const workspace = join(root, 'workspace');
      const released = join(root, 'released');
      await mkdir(join(workspace, 'nested'), { recursive: true });
      await writeFile(join(workspace, 'nested', 'file'), 'x');
      await mkdir(released);
      const tree = await processTree();
      const members = [tree.pid as number, ...descendants(tree.pid as number)];
      const bystander = spawn('sleep', ['600'], { stdio: 'ignore' });
      cleanups.push(() => bystander.kill('SIGKILL'));
      await waitFor(() => isRunning(bystander.pid as number), 'the bystander runs');

      const reaper = spawn('/bin/sh', ['-c', reaperScript, 'ghost-sandbox-reaper'], {
        stdio: ['pipe', 'ignore', 'pipe'],
      });
      let errors = '';
      reaper.stderr?.on('data', (chunk: Buffer) => {
        errors += chunk.toString();
      });
      const exited = new Promise((resolve) => reaper.once('exit', resolve));
      reaper.stdin?.write(
        [
          `+ 1 p ${tree.pid} ${startTime(tree.pid as number)}`,
          `+ 2 d ${workspace}`,
          `+ 3 d ${released}`,
          // The bystander's pid with another start time: a later process that reused a pid.
          `+ 4 p ${bystander.pid} 1`,
          '- 3',
          '',
        ].join('\n'),
      );
      reaper.stdin?.end();
      await exited;

      expect(errors).toBe('');
      // SIGKILL is sent by the time the reaper exits; the kernel may take a moment to end them.
      await waitFor(() => members.filter(isRunning).length === 0, 'the killed tree has ended').catch(
        () => {},
      );
      expect(members.filter(isRunning), 'processes of the registered tree still running').toEqual([]);
      expect(existsSync(workspace), 'the registered directory').toBe(false);
      expect(existsSync(released), 'the released directory').toBe(true);
      expect(isRunning(bystander.pid as number), 'a process with the pid but another start time').toBe(true);
    },
  );

  it('is started by the first registration and gone after the last release, leaving the released directory', async () => {
    const root = await scratch();
    const directory = join(root, 'kept');
    const before = await reaperProcesses();
    const first = await reapOnParentDeath({ directory });
    const second = await reapOnParentDeath({ directory: join(root, 'other') });
    await mkdir(directory);
    if (isLinux) expect((await reaperProcesses()).length).toBe(before.length + 1);
    await first.release();
    await first.release();
    await second.release();
    expect(await reaperProcesses()).toEqual(before);
    expect(existsSync(directory)).toBe(true);
  });

  it('refuses a relative path, the root directory, a path with a newline and a pid of 1 or below', async () => {
    await expect(reapOnParentDeath({ directory: 'relative' })).rejects.toThrow(RangeError);
    await expect(reapOnParentDeath({ directory: '/' })).rejects.toThrow(RangeError);
    await expect(reapOnParentDeath({ cgroup: '/tmp/a\nb' })).rejects.toThrow(RangeError);
    await expect(reapOnParentDeath({ process: 1 })).rejects.toThrow(RangeError);
  });
});

/** The reaper processes of this test process (Linux only; elsewhere none are seen). */
async function reaperProcesses(): Promise<number[]> {
  if (!isLinux) return [];
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const commandLine = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (
        parent === process.pid &&
        commandLine.includes('ghost-sandbox-reaper') &&
        isRunning(Number(entry))
      ) {
        found.push(Number(entry));
      }
    } catch {
      // Ended while we looked.
    }
  }
  return found;
}
