import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { ConfigurationError, createRuntime, SandboxUnavailableError } from '@ghost/core';
import {
  createSandboxWorkspace,
  removeSandboxWorkspace,
  type SandboxProcess,
  type SandboxSpawnSpec,
} from '@ghost/core/sandbox';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { unrestrictedCapabilities, unrestrictedSandbox } from './unrestricted-sandbox.js';

/** Real processes take a moment to start and, when killed, to be reaped. */
const processTimeout = 20_000;

const started: SandboxProcess[] = [];
const workspaces: string[] = [];

afterEach(async () => {
  // close() removes the workspace too; the rm covers workspaces whose spawn was rejected.
  await Promise.allSettled(started.splice(0).map((child) => child.close()));
  await Promise.all(workspaces.splice(0).map((path) => removeSandboxWorkspace(path)));
});

async function makeWorkspace(): Promise<string> {
  const path = await createSandboxWorkspace({ prefix: 'ghost-unrestricted-' });
  workspaces.push(path);
  return path;
}

function nodeSpec(
  workspace: string,
  script: string,
  overrides: Partial<SandboxSpawnSpec> = {},
): SandboxSpawnSpec {
  return {
    command: process.execPath,
    args: ['-e', script],
    env: {},
    runtimePaths: [dirname(process.execPath)],
    workspace,
    network: 'shared',
    ...overrides,
  };
}

async function startNode(script: string, overrides: Partial<SandboxSpawnSpec> = {}): Promise<SandboxProcess> {
  const workspace = await makeWorkspace();
  const child = await unrestrictedSandbox.spawn(nodeSpec(workspace, script, overrides));
  started.push(child);
  return child;
}

function readLine(stream: Readable): Promise<string> {
  return new Promise((resolve, reject) => {
    let received = '';
    const onData = (chunk: Buffer) => {
      received += chunk.toString('utf8');
      const end = received.indexOf('\n');
      if (end >= 0) {
        stream.off('data', onData);
        resolve(received.slice(0, end));
      }
    };
    stream.on('data', onData);
    stream.once('error', reject);
  });
}

/**
 * Whether a process still runs. A killed process is a zombie until its parent (here PID 1) reaps
 * it, and `kill(pid, 0)` still finds zombies, so on Linux /proc tells a zombie apart.
 */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
  if (process.platform !== 'linux') return true;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !['Z', 'X'].includes(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3));
  } catch {
    return false;
  }
}

/** A child that starts a grandchild in its own process group, prints its pid, then does `then`. */
function grandchildScript(then: string): string {
  return `
    const { spawn } = require('node:child_process');
    const grandchild = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    grandchild.on('spawn', () => { process.stdout.write(grandchild.pid + '\\n', () => { ${then} }); });
  `;
}

async function grandchildPid(child: SandboxProcess): Promise<number> {
  await vi.waitFor(() => expect(child.stdout.text).toContain('\n'), { timeout: 10_000 });
  return Number(child.stdout.text.trim());
}

describe('unrestrictedSandbox', () => {
  it('is a sandbox-v1 backend named unrestricted for platforms with process groups', () => {
    expect(unrestrictedSandbox).toMatchObject({
      kind: 'sandbox',
      specificationVersion: 'sandbox-v1',
      name: 'unrestricted',
      platforms: ['linux', 'darwin', 'freebsd', 'openbsd'],
    });
  });

  it('detects itself as available and enforcing only the environment', async () => {
    const detection = await unrestrictedSandbox.detect();
    expect(detection).toEqual({
      available: true,
      capabilities: {
        processTreeOwnership: false,
        subprocessDenial: false,
        networkIsolation: false,
        filesystemIsolation: false,
        memoryLimit: false,
        cpuLimit: false,
        fileSizeLimit: false,
        openFilesLimit: false,
        processLimit: false,
        syscallFilter: false,
        environmentIsolation: true,
      },
    });
    expect(detection.capabilities).toBe(unrestrictedCapabilities);
  });

  it(
    'carries a round trip on fd 3',
    async () => {
      const child = await startNode(`
        const fs = require('node:fs');
        let received = '';
        fs.createReadStream(null, { fd: 3 }).on('data', (chunk) => {
          received += chunk;
          const end = received.indexOf('\\n');
          if (end >= 0) {
            fs.writeSync(3, 'echo:' + received.slice(0, end) + '\\n');
            process.exit(0);
          }
        });
      `);
      expect(child.channels).toHaveLength(1);
      expect(child.channel).toBe(child.channels[0]);
      const reply = readLine(child.channel);
      child.channel.write('ping\n');
      expect(await reply).toBe('echo:ping');
      expect(await child.exited).toEqual({ code: 0, signal: null });
    },
    processTimeout,
  );

  it(
    'opens as many extra channels as asked for, from fd 3 on',
    async () => {
      const child = await startNode(
        `require('node:fs').writeSync(3, 'three\\n'); require('node:fs').writeSync(4, 'four\\n');`,
        { extraFds: 2 },
      );
      expect(child.channels).toHaveLength(2);
      const [three, four] = await Promise.all([readLine(child.channels[0]!), readLine(child.channels[1]!)]);
      expect([three, four]).toEqual(['three', 'four']);
      await child.exited;
    },
    processTimeout,
  );

  it(
    'gives the child exactly the environment it was given',
    async () => {
      process.env.GHOST_FAKE_SECRET = 'do-not-leak';
      try {
        const child = await startNode('process.stdout.write(JSON.stringify(process.env))', {
          env: { GHOST_VISIBLE: 'yes' },
        });
        await child.exited;
        expect(JSON.parse(child.stdout.text)).toEqual({ GHOST_VISIBLE: 'yes' });
      } finally {
        delete process.env.GHOST_FAKE_SECRET;
      }
    },
    processTimeout,
  );

  it(
    'runs in the workspace unless told otherwise',
    async () => {
      const child = await startNode('process.stdout.write(process.cwd())');
      await child.exited;
      expect(child.stdout.text).toBe(workspaces.at(-1));
    },
    processTimeout,
  );

  it(
    'keeps the first 64 KiB of stdout and stderr and counts every byte',
    async () => {
      const child = await startNode(`
        process.stdout.write('o'.repeat(100000));
        process.stderr.write('e'.repeat(70000));
      `);
      await child.exited;
      expect(child.stdout.text).toBe('o'.repeat(64 * 1024));
      expect(child.stdout.bytesSeen).toBe(100_000);
      expect(child.stdout.isTruncated).toBe(true);
      expect(child.stderr.text).toBe('e'.repeat(64 * 1024));
      expect(child.stderr.bytesSeen).toBe(70_000);
      expect(child.stderr.isTruncated).toBe(true);
    },
    processTimeout,
  );

  it(
    'has all of a short output once exited settles',
    async () => {
      const child = await startNode(`process.stdout.write('done'); console.error('oops'); process.exit(3);`);
      expect(await child.exited).toEqual({ code: 3, signal: null });
      expect(child.stdout).toMatchObject({ text: 'done', bytesSeen: 4, isTruncated: false });
      expect(child.stderr.text).toBe('oops\n');
    },
    processTimeout,
  );

  it(
    'reports the signal that ended the process',
    async () => {
      const child = await startNode('setInterval(() => {}, 1000)');
      child.kill('SIGTERM');
      expect(await child.exited).toEqual({ code: null, signal: 'SIGTERM' });
    },
    processTimeout,
  );

  it(
    'kills a grandchild the child started in the background',
    async () => {
      const child = await startNode(grandchildScript('setInterval(() => {}, 1000)'));
      const grandchild = await grandchildPid(child);
      expect(isRunning(grandchild)).toBe(true);
      child.kill();
      expect(await child.exited).toEqual({ code: null, signal: 'SIGKILL' });
      await child.close();
      expect(isRunning(grandchild)).toBe(false);
      // Once reaped it is gone altogether; PID 1 may take a moment to reap an orphan.
      await vi.waitFor(
        () => expect(() => process.kill(grandchild, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' })),
        {
          timeout: 10_000,
        },
      );
    },
    processTimeout,
  );

  it(
    'still reaches the group after the first process exited, until close',
    async () => {
      const child = await startNode(grandchildScript('process.exit(0)'));
      const grandchild = await grandchildPid(child);
      expect(await child.exited).toEqual({ code: 0, signal: null });
      expect(isRunning(grandchild)).toBe(true);
      child.kill();
      await vi.waitFor(() => expect(isRunning(grandchild)).toBe(false), { timeout: 5_000 });
      await child.close();
    },
    processTimeout,
  );

  it(
    'kills survivors of the group on close',
    async () => {
      const child = await startNode(grandchildScript('process.exit(0)'));
      const grandchild = await grandchildPid(child);
      await child.exited;
      expect(isRunning(grandchild)).toBe(true);
      await child.close();
      expect(isRunning(grandchild)).toBe(false);
    },
    processTimeout,
  );

  it(
    'removes the workspace on close, returns the same promise when closed again, then ignores kill',
    async () => {
      const child = await startNode('setInterval(() => {}, 1000)');
      const workspace = workspaces.at(-1)!;
      await writeFile(join(workspace, 'left-behind.txt'), 'x');
      const first = child.close();
      expect(child.close()).toBe(first);
      await first;
      expect(existsSync(workspace)).toBe(false);
      expect(await child.exited).toEqual({ code: null, signal: 'SIGKILL' });
      expect(child.channel.destroyed).toBe(true);
      expect(() => child.kill()).not.toThrow();
      await expect(child.close()).resolves.toBeUndefined();
    },
    processTimeout,
  );

  it(
    'kills the group when wallSeconds pass and reports the limit',
    async () => {
      const startedAt = Date.now();
      const child = await startNode('setInterval(() => {}, 1000)', { limits: { wallSeconds: 0.3 } });
      expect(await child.exited).toEqual({ code: null, signal: 'SIGKILL', limitExceeded: 'wallSeconds' });
      expect(Date.now() - startedAt).toBeGreaterThanOrEqual(250);
    },
    processTimeout,
  );

  it(
    'does not report wallSeconds for a process that ends in time',
    async () => {
      const child = await startNode('', { limits: { wallSeconds: 30 } });
      expect(await child.exited).toEqual({ code: 0, signal: null });
    },
    processTimeout,
  );

  it(
    'kills the group when its abort signal is aborted',
    async () => {
      const controller = new AbortController();
      const child = await startNode('setInterval(() => {}, 1000)', { signal: controller.signal });
      controller.abort();
      expect(await child.exited).toEqual({ code: null, signal: 'SIGKILL' });
    },
    processTimeout,
  );

  it(
    'starts nothing for an already aborted signal',
    async () => {
      const workspace = await makeWorkspace();
      const reason = new Error('stopped before start');
      const spawning = unrestrictedSandbox.spawn(
        nodeSpec(workspace, "require('node:fs').writeFileSync('started', '')", {
          signal: AbortSignal.abort(reason),
        }),
      );
      await expect(spawning).rejects.toBe(reason);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(existsSync(join(workspace, 'started'))).toBe(false);
    },
    processTimeout,
  );

  it.each([
    ['network none', { network: 'none' as const }],
    ['network omitted', { network: undefined }],
    ['memoryBytes', { limits: { memoryBytes: 64 * 1024 * 1024 } }],
  ])(
    'rejects %s with a SandboxUnavailableError and spawns nothing',
    async (_name, overrides) => {
      const workspace = await makeWorkspace();
      const spec = nodeSpec(workspace, "require('node:fs').writeFileSync('started', '')");
      const spawning = unrestrictedSandbox.spawn({ ...spec, ...overrides } as SandboxSpawnSpec);
      await expect(spawning).rejects.toBeInstanceOf(SandboxUnavailableError);
      await expect(spawning).rejects.toThrow(/the unrestricted backend cannot/i);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(existsSync(join(workspace, 'started'))).toBe(false);
      expect(existsSync(workspace)).toBe(true);
    },
    processTimeout,
  );

  it(
    'rejects a command that does not exist, naming it, and leaves the workspace to the caller',
    async () => {
      const workspace = await makeWorkspace();
      const command = join(workspace, 'no-such-program');
      const spawning = unrestrictedSandbox.spawn({ ...nodeSpec(workspace, ''), command });
      await expect(spawning).rejects.toBeInstanceOf(SandboxUnavailableError);
      await expect(spawning).rejects.toThrow(command);
      expect(existsSync(workspace)).toBe(true);
    },
    processTimeout,
  );

  it('rejects a workspace that does not exist, or that createSandboxWorkspace() did not make', async () => {
    const workspace = await makeWorkspace();
    const missing = join(workspace, 'missing');
    await expect(unrestrictedSandbox.spawn(nodeSpec(missing, ''))).rejects.toBeInstanceOf(ConfigurationError);
    const file = join(workspace, 'file');
    await writeFile(file, '');
    await expect(unrestrictedSandbox.spawn(nodeSpec(file, ''))).rejects.toMatchObject({
      code: 'SANDBOX_WORKSPACE_REFUSED',
      problem: 'not-made-here',
      path: file,
    });
    await expect(unrestrictedSandbox.spawn(nodeSpec(workspace, '', { cwd: missing }))).rejects.toThrow(
      /cwd .* cannot be used/,
    );
  });

  it("is what the registry loads for 'unrestricted', and never for 'native'", async () => {
    const runtime = createRuntime({ importModule: (specifier) => import(/* @vite-ignore */ specifier) });
    expect(await runtime.registry.sandbox('unrestricted')).toBe(unrestrictedSandbox);
    if (process.platform === 'linux' || process.platform === 'darwin') {
      expect(await runtime.registry.sandbox('native').catch(() => undefined)).not.toBe(unrestrictedSandbox);
    }
  });
});
