import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CleanupError, ConfigurationError, SandboxUnavailableError } from '../errors.js';
import { noSandboxCapabilities, type SandboxCapabilities, type SandboxProcess } from '../sandbox.js';
import { processGroupTree } from './process-group-tree.js';
import { startSandboxChild } from './sandbox-child.js';
import type { SandboxProcessTree } from './sandbox-process-tree.js';
import { planSandboxSpawn, type SandboxSpawnPlan } from './sandbox-spawn-plan.js';
import { type SandboxSupervisionOptions, superviseSandboxProcess } from './sandbox-supervision.js';
import { createSandboxWorkspace, removeSandboxWorkspace } from './sandbox-workspace.js';
import { checkSpawnDirectories } from './spawn-directories.js';

/** Real processes take a moment to start and, when killed, to be reaped. */
const processTimeout = 20_000;

/** A plain child process's capabilities, plus the CPU and file limits the kernel applies through rlimits. */
const capabilities: SandboxCapabilities = {
  ...noSandboxCapabilities,
  environmentIsolation: true,
  cpuLimit: true,
  fileSizeLimit: true,
};

const started: SandboxProcess[] = [];
const workspaces: string[] = [];

afterEach(async () => {
  await Promise.allSettled(started.splice(0).map((child) => child.close()));
  await Promise.all(workspaces.splice(0).map((path) => removeSandboxWorkspace(path)));
});

async function planNode(
  script: string,
  limits: Record<string, number> = {},
  command: readonly string[] = [process.execPath, '-e'],
): Promise<SandboxSpawnPlan> {
  const workspace = await createSandboxWorkspace({ prefix: 'ghost-kit-' });
  workspaces.push(workspace);
  return planSandboxSpawn(
    {
      command: command[0]!,
      args: [...command.slice(1), script],
      env: {},
      runtimePaths: [],
      workspace,
      network: 'shared',
      limits,
    },
    { name: 'kit-test', capabilities },
  );
}

/** Starts `script` under node and supervises it; `tree` and the other options may be replaced. */
async function superviseNode(
  script: string,
  options: {
    limits?: Record<string, number>;
    tree?: (groupId: number) => SandboxProcessTree;
    supervision?: Partial<SandboxSupervisionOptions>;
    /** The interpreter and its flag before the script; default node's `-e`. */
    command?: readonly string[];
  } = {},
): Promise<SandboxProcess> {
  const plan = await planNode(script, options.limits, options.command);
  const child = await startSandboxChild(plan, {
    backend: 'kit-test',
    command: plan.command,
    args: plan.args,
  });
  const tree = options.tree?.(child.pid!) ?? processGroupTree(child.pid!);
  const supervised = superviseSandboxProcess({
    backend: 'kit-test',
    plan,
    child,
    tree,
    ...options.supervision,
  });
  started.push(supervised);
  return supervised;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !['Z', 'X'].includes(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3));
  } catch {
    return false;
  }
}

/** A child that starts a grandchild in its group, prints the grandchild's pid, and keeps running. */
const grandchildScript = `
  const { spawn } = require('node:child_process');
  const grandchild = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  grandchild.on('spawn', () => process.stdout.write(grandchild.pid + '\\n'));
  setInterval(() => {}, 1000);
`;

describe.runIf(process.platform === 'linux')('superviseSandboxProcess (Linux: reads /proc)', () => {
  it(
    'reports the exit once the output has drained, and keeps it bounded',
    async () => {
      const child = await superviseNode(
        `process.stdout.write('x'.repeat(100000)); process.stderr.write('oops'); process.exitCode = 3;`,
      );
      await expect(child.exited).resolves.toEqual({ code: 3, signal: null });
      expect(child.stdout.bytesSeen).toBe(100_000);
      expect(child.stdout.isTruncated).toBe(true);
      expect(child.stdout.text).toHaveLength(64 * 1024);
      expect(child.stderr.text).toBe('oops');
    },
    processTimeout,
  );

  it(
    'names the wall clock when its timer killed the process',
    async () => {
      const child = await superviseNode('setInterval(() => {}, 1000)', { limits: { wallSeconds: 0.2 } });
      await expect(child.exited).resolves.toEqual({
        code: null,
        signal: 'SIGKILL',
        limitExceeded: 'wallSeconds',
      });
    },
    processTimeout,
  );

  it(
    'names cpuSeconds for SIGXCPU and fileBytes for SIGXFSZ only when the plan asked for them',
    async () => {
      // A shell, so the signal's core dump can be turned off first.
      const shell = ['/bin/sh', '-c'];
      const raise = (signal: string) => `ulimit -c 0; kill -${signal} $$; sleep 5`;
      const withCpu = await superviseNode(raise('XCPU'), { limits: { cpuSeconds: 30 }, command: shell });
      await expect(withCpu.exited).resolves.toMatchObject({ signal: 'SIGXCPU', limitExceeded: 'cpuSeconds' });
      const withFile = await superviseNode(raise('XFSZ'), {
        limits: { fileBytes: 1_000_000 },
        command: shell,
      });
      await expect(withFile.exited).resolves.toMatchObject({ signal: 'SIGXFSZ', limitExceeded: 'fileBytes' });
      const without = await superviseNode(raise('XCPU'), { command: shell });
      const exit = await without.exited;
      expect(exit.signal).toBe('SIGXCPU');
      expect(exit.limitExceeded).toBeUndefined();
    },
    processTimeout,
  );

  it(
    "kills the tree when a backend's own watch reports a limit, and stops the watch once the process exited",
    async () => {
      const stop = vi.fn();
      let report: ((limit: 'memoryBytes') => void) | undefined;
      const child = await superviseNode('setInterval(() => {}, 1000)', {
        supervision: {
          watchLimits(exceeded) {
            report = exceeded;
            return stop;
          },
        },
      });
      expect(stop).not.toHaveBeenCalled();
      report?.('memoryBytes');
      await expect(child.exited).resolves.toEqual({
        code: null,
        signal: 'SIGKILL',
        limitExceeded: 'memoryBytes',
      });
      expect(stop).toHaveBeenCalledTimes(1);
    },
    processTimeout,
  );

  it(
    "takes the backend's reading of the exit, and Node's when that reading fails",
    async () => {
      const translated = await superviseNode('process.exit(137)', {
        supervision: {
          interpretExit: (exit) => (exit.code === 137 ? { code: null, signal: 'SIGKILL' } : exit),
        },
      });
      await expect(translated.exited).resolves.toEqual({ code: null, signal: 'SIGKILL' });
      const failing = await superviseNode('process.exit(5)', {
        supervision: {
          interpretExit: async () => {
            throw new Error('the cgroup is gone');
          },
        },
      });
      await expect(failing.exited).resolves.toEqual({ code: 5, signal: null });
    },
    processTimeout,
  );

  it(
    'kills the tree when the abort signal fires',
    async () => {
      const controller = new AbortController();
      const workspace = await createSandboxWorkspace({ prefix: 'ghost-kit-' });
      workspaces.push(workspace);
      const plan = planSandboxSpawn(
        {
          command: process.execPath,
          args: ['-e', 'setInterval(() => {}, 1000)'],
          env: {},
          runtimePaths: [],
          workspace,
          network: 'shared',
          signal: controller.signal,
        },
        { name: 'kit-test', capabilities },
      );
      const child = await startSandboxChild(plan, {
        backend: 'kit-test',
        command: plan.command,
        args: plan.args,
      });
      const supervised = superviseSandboxProcess({
        backend: 'kit-test',
        plan,
        child,
        tree: processGroupTree(child.pid!),
      });
      started.push(supervised);
      controller.abort();
      await expect(supervised.exited).resolves.toEqual({ code: null, signal: 'SIGKILL' });
    },
    processTimeout,
  );

  it(
    'closes once: ends the whole group, removes the workspace, releases the tree, then ignores kill',
    async () => {
      const release = vi.fn(async () => {});
      const signals: NodeJS.Signals[] = [];
      const child = await superviseNode(grandchildScript, {
        tree: (groupId) => {
          const group = processGroupTree(groupId);
          return {
            ...group,
            signal(signal) {
              signals.push(signal);
              group.signal(signal);
            },
            release,
          };
        },
      });
      await vi.waitFor(() => expect(child.stdout.text).toContain('\n'), { timeout: 10_000 });
      const grandchild = Number(child.stdout.text.trim());
      expect(isRunning(grandchild)).toBe(true);
      const workspace = workspaces.at(-1)!;
      await writeFile(join(workspace, 'left-behind.txt'), 'data');

      const closing = child.close();
      expect(child.close()).toBe(closing);
      await closing;
      expect(isRunning(child.pid)).toBe(false);
      expect(isRunning(grandchild)).toBe(false);
      expect(existsSync(workspace)).toBe(false);
      expect(release).toHaveBeenCalledTimes(1);
      const signalsBeforeKill = signals.length;
      child.kill();
      expect(signals).toHaveLength(signalsBeforeKill);
    },
    processTimeout,
  );

  it(
    'rejects close with one CleanupError naming the survivors and the failed release, and still removes the workspace',
    async () => {
      const child = await superviseNode('setInterval(() => {}, 1000)', {
        tree: (groupId) => ({
          ...processGroupTree(groupId),
          // A tree that never confirms its end, as a process stuck in the kernel would.
          terminate: async () => {
            process.kill(-groupId, 'SIGKILL');
            return false;
          },
          summarizeSurvivors: async () => 'process 4242 of the test tree',
          release: async () => {
            throw new Error('the cgroup is busy');
          },
        }),
      });
      const workspace = workspaces.at(-1)!;
      const closing = child.close();
      await expect(closing).rejects.toBeInstanceOf(CleanupError);
      await expect(closing).rejects.toThrow(
        /Closing the kit-test sandbox process failed: process 4242 of the test tree were still running 5 s after SIGKILL; what held its processes could not be released: the cgroup is busy\./,
      );
      expect(existsSync(workspace)).toBe(false);
    },
    processTimeout,
  );
});

describe.runIf(process.platform === 'linux')(
  'superviseSandboxProcess given a child it cannot supervise (Linux)',
  () => {
    it(
      'throws a TypeError and kills the child rather than leave it running unsupervised',
      async () => {
        const plan = await planNode('');
        const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {
          detached: true,
          stdio: ['ignore', 'pipe', 'pipe'], // no fd 3, though the plan asks for one channel
        });
        await new Promise((resolve) => child.once('spawn', resolve));
        const exited = new Promise((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
        expect(() =>
          superviseSandboxProcess({ backend: 'kit-test', plan, child, tree: processGroupTree(child.pid!) }),
        ).toThrow(/needs stdout, stderr and 1 channel pipe/);
        await expect(exited).resolves.toBe('SIGKILL');
      },
      processTimeout,
    );
  },
);

describe('startSandboxChild', () => {
  it('rejects a command that cannot be started with a SandboxUnavailableError naming it', async () => {
    const plan = await planNode('');
    const command = join(plan.workspace, 'no-such-program');
    const starting = startSandboxChild(plan, { backend: 'kit-test', command, args: [] });
    await expect(starting).rejects.toBeInstanceOf(SandboxUnavailableError);
    await expect(starting).rejects.toThrow(`The kit-test backend could not start ${command}`);
  });

  it.runIf(process.platform === 'linux')(
    'starts the child as the leader of its own process group, in the plan’s cwd with the plan’s env (Linux: reads /proc)',
    async () => {
      const plan = await planNode('');
      const child = await startSandboxChild(plan, {
        backend: 'kit-test',
        command: process.execPath,
        args: [
          '-e',
          'process.stdout.write(JSON.stringify([process.cwd(), process.env])); setInterval(() => {}, 1000)',
        ],
      });
      const supervised = superviseSandboxProcess({
        backend: 'kit-test',
        plan,
        child,
        tree: processGroupTree(child.pid!),
      });
      started.push(supervised);
      const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
      const groupId = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
      expect(groupId).toBe(child.pid);
      await vi.waitFor(() => expect(supervised.stdout.text).toContain(']'), { timeout: 10_000 });
      expect(JSON.parse(supervised.stdout.text)).toEqual([plan.workspace, {}]);
    },
    processTimeout,
  );
});

describe('processGroupTree', () => {
  it('refuses the group ids that mean every process or our own group', () => {
    expect(() => processGroupTree(0)).toThrow(RangeError);
    expect(() => processGroupTree(1)).toThrow(RangeError);
    expect(() => processGroupTree(-5)).toThrow(RangeError);
  });
});

describe('checkSpawnDirectories', () => {
  it('accepts an existing workspace and refuses a missing one or a file, naming the field', async () => {
    const plan = await planNode('');
    await expect(checkSpawnDirectories(plan)).resolves.toBeUndefined();
    const file = join(plan.workspace, 'file');
    await writeFile(file, '');
    const missing = {
      ...plan,
      workspace: join(plan.workspace, 'missing'),
      cwd: join(plan.workspace, 'missing'),
    };
    await expect(checkSpawnDirectories(missing)).rejects.toBeInstanceOf(ConfigurationError);
    await expect(checkSpawnDirectories(missing)).rejects.toThrow(/workspace .* does not exist/);
    await expect(checkSpawnDirectories({ ...plan, cwd: file })).rejects.toThrow(/cwd .* is not a directory/);
  });
});
