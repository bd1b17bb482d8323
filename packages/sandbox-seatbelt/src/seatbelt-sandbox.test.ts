import { spawn } from 'node:child_process';
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { SandboxUnavailableError } from '@ghost/core';
import {
  createSandboxWorkspace,
  noSandboxCapabilities,
  planSandboxSpawn,
  removeSandboxWorkspace,
  type SandboxBackendV1,
  type SandboxCapabilities,
  type SandboxProcess,
  type SandboxSpawnSpec,
} from '@ghost/core/sandbox';
import { describeSandboxConformance } from '@ghost/sandbox-testkit';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import defaultExport, { createSeatbeltSandbox, seatbeltSandbox } from './index.js';
import { launcherFailureStatus } from './seatbelt-launcher.js';
import { checkProfileShape, readSbpl } from './test-support/sbpl-reader.js';
import { type StandInSandboxExec, writeStandInSandboxExec } from './test-support/stand-in-sandbox-exec.js';
import { trackedProcessTree } from './tracked-process-tree.js';

const isMac = process.platform === 'darwin';
const onLinux = process.platform === 'linux';
const linuxOnly = onLinux ? '' : ' (skipped: the stand-in runs on Linux, where /proc shows the limits)';

const standInDirectory = await realpath(await mkdtemp(join(tmpdir(), 'ghost-seatbelt-stand-in-')));
const standIn: StandInSandboxExec = await writeStandInSandboxExec(standInDirectory);
const backend = createSeatbeltSandbox({ sandboxExecPath: standIn.path });

/**
 * What the process path enforces through the stand-in, which applies no profile: the rlimits the
 * launcher sets, the memory watch, and exactly the spec's environment. Not files, network,
 * subprocesses or the tree (profile and pid namespace matters): the conformance cases for those
 * are skipped and say so.
 */
const standInCapabilities: SandboxCapabilities = Object.freeze({
  ...noSandboxCapabilities,
  memoryLimit: true,
  cpuLimit: true,
  fileSizeLimit: true,
  openFilesLimit: true,
  environmentIsolation: true,
});

/**
 * The real backend's spawn, claiming only what the stand-in lets it enforce: its detect() reports
 * those capabilities, and its spawn refuses what they do not cover, as a backend must.
 */
const standInBackend: SandboxBackendV1 = {
  ...backend,
  async spawn(spec) {
    planSandboxSpawn(spec, { name: 'seatbelt', capabilities: standInCapabilities });
    return backend.spawn(spec);
  },
  // The suite checks the backend claims the platform it runs on; the stand-in runs it here.
  platforms: ['darwin', 'linux'],
  detect: async () => ({ available: true, capabilities: standInCapabilities }),
};

if (onLinux) {
  await describeSandboxConformance({
    name: 'seatbelt process management through a stand-in sandbox-exec (the profile is not enforced: macOS-only proof)',
    create: () => standInBackend,
  });
}

const workspaces: string[] = [];
const processes: SandboxProcess[] = [];

afterEach(async () => {
  await Promise.all(processes.splice(0).map((child) => child.close()));
  await Promise.all(workspaces.splice(0).map((path) => removeSandboxWorkspace(path)));
});

afterAll(async () => {
  await rm(standInDirectory, { recursive: true, force: true });
});

async function workspace(): Promise<string> {
  const path = await createSandboxWorkspace({ prefix: 'ghost-seatbelt-test-' });
  workspaces.push(path);
  return path;
}

/** Runs `source` with Node through the backend and the stand-in; the process is closed after the test. */
async function runNode(source: string, spec: Partial<SandboxSpawnSpec> = {}): Promise<SandboxProcess> {
  const child = await backend.spawn({
    command: process.execPath,
    args: ['-e', source],
    env: {},
    runtimePaths: [dirname(process.execPath)],
    workspace: await workspace(),
    network: 'shared',
    ...spec,
  });
  processes.push(child);
  return child;
}

/** Whether a pid still runs anything (a zombie waiting to be reaped does not). */
async function isRunning(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (stat === undefined) return false;
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state !== 'Z' && state !== 'X';
}

// What only holds off macOS: there detect() proves the real sandbox instead.
const offMacOnly = isMac ? ' (skipped: on macOS seatbelt is available)' : '';

describe('the seatbelt backend off macOS', () => {
  it('is the default export, named seatbelt, for macOS', () => {
    expect(defaultExport).toBe(seatbeltSandbox);
    expect(seatbeltSandbox).toMatchObject({ kind: 'sandbox', name: 'seatbelt', platforms: ['darwin'] });
  });

  it.skipIf(isMac)(`detect() says seatbelt needs macOS, and enforces nothing${offMacOnly}`, async () => {
    const detection = await seatbeltSandbox.detect();
    expect(detection.available).toBe(false);
    expect(detection.reason).toMatch(new RegExp(`^seatbelt needs macOS; this is ${process.platform}\\.`));
    expect(Object.values(detection.capabilities).every((enforced) => !enforced)).toBe(true);
  });

  it.skipIf(isMac)(
    `spawn() refuses with the same reason, before starting anything${offMacOnly}`,
    async () => {
      const spawning = seatbeltSandbox.spawn({
        command: process.execPath,
        args: [],
        env: {},
        runtimePaths: [],
        workspace: await workspace(),
      });
      await expect(spawning).rejects.toSatisfy((error) => SandboxUnavailableError.isInstance(error));
      await expect(spawning).rejects.toThrow(/seatbelt needs macOS/);
    },
  );

  it('refuses a sandboxExecPath that is not absolute', () => {
    expect(() => createSeatbeltSandbox({ sandboxExecPath: 'sandbox-exec' })).toThrow(/absolute path/);
  });
});

describe('the seatbelt process path through a stand-in sandbox-exec (proves process management, not enforcement)', () => {
  it('passes sandbox-exec -p with a well-formed profile, then the command, and runs it', async () => {
    const source = 'console.log("hello from " + process.argv.length) // the arguments test';
    const child = await runNode(source);
    const exit = await child.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(child.stdout.text).toBe('hello from 1\n');
    const call = (await standIn.calls()).find((args) => args.includes(source));
    expect(call).toBeDefined();
    const [flag, profile, ...rest] = call!;
    expect(flag).toBe('-p');
    const separator = rest.indexOf('--');
    const parameters = Object.fromEntries(
      rest.slice(0, separator).map((definition) => {
        const equals = definition.indexOf('=');
        return [definition.slice(2, equals), definition.slice(equals + 1)];
      }),
    );
    expect(checkProfileShape(readSbpl(profile!), parameters).length).toBeGreaterThan(0);
    expect(rest.slice(separator + 1)).toEqual([process.execPath, '-e', source]);
  });

  it('hands arguments and environment values through the launcher shell unread', async () => {
    const awkward = [`it's "quoted"`, '$(touch pwned) `touch pwned` $HOME', 'line\nbreak', '', ' -- ', '*'];
    // Names a shell would drop (such as '-dash') are covered by the launcher's own tests: the
    // stand-in is a shell, which drops them, where sandbox-exec passes them on.
    const env = { SPACED: 'a b', DOLLAR: '$PATH', NEWLINE: 'x\ny', EMPTY: '', QUOTE: `'"` };
    const child = await runNode(
      'console.log(JSON.stringify({ args: process.argv.slice(1), env: process.env }))',
      {
        args: [
          '-e',
          'console.log(JSON.stringify({ args: process.argv.slice(1), env: process.env }))',
          ...awkward,
        ],
        env,
      },
    );
    expect(await child.exited).toEqual({ code: 0, signal: null });
    const seen = JSON.parse(child.stdout.text) as { args: string[]; env: Record<string, string> };
    expect(seen.args).toEqual(awkward);
    // The stand-in is a shell, which adds PWD (the contract allows it); sandbox-exec adds nothing.
    const { PWD: _addedByTheStandIn, ...programEnvironment } = seen.env;
    expect(programEnvironment).toEqual(env);
  });

  it.skipIf(!onLinux)(
    `sets RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_NOFILE and no core file before the program starts${linuxOnly}`,
    async () => {
      const child = await runNode(
        'process.stdout.write(require("fs").readFileSync("/proc/self/limits", "utf8"))',
        {
          limits: { cpuSeconds: 7.2, fileBytes: 1_000_000, openFiles: 123 },
        },
      );
      expect(await child.exited).toEqual({ code: 0, signal: null });
      const limits = child.stdout.text;
      expect(limits).toMatch(/^Max cpu time +8 +9 +seconds/m);
      // 512-byte blocks, rounded down: 1,000,000 bytes is 1953 blocks.
      expect(limits).toMatch(new RegExp(`^Max file size +${1953 * 512} +${1953 * 512} +bytes`, 'm'));
      expect(limits).toMatch(/^Max open files +123 +123 +files/m);
      expect(limits).toMatch(/^Max core file size +0 +0 +bytes/m);
    },
  );

  it.skipIf(!onLinux)(
    `reports a limit the shell cannot set, without running the program${linuxOnly}`,
    async () => {
      const child = await runNode('console.log("ran")', { limits: { openFiles: 2 ** 40 } });
      const exit = await child.exited;
      expect(exit.code).toBe(launcherFailureStatus);
      expect(child.stderr.text).toMatch(/could not set openFiles/);
      expect(child.stdout.text).toBe('');
    },
  );

  it('kills a tree whose resident memory passes memoryBytes, and names the limit', async () => {
    const child = await runNode(
      'const kept = []; setInterval(() => { const b = Buffer.alloc(16 * 1024 * 1024, 1); kept.push(b); }, 10);',
      { limits: { memoryBytes: 300 * 1024 * 1024, wallSeconds: 60 } },
    );
    const exit = await child.exited;
    expect(exit).toMatchObject({ signal: 'SIGKILL', limitExceeded: 'memoryBytes' });
  });

  it.skipIf(!onLinux)(
    `close() ends the program, a grandchild in its group and one that left the group${linuxOnly}`,
    async () => {
      const child = await runNode(
        `const { spawn } = require('child_process');
         const inGroup = spawn('/bin/sleep', ['1000'], { stdio: 'ignore' });
         const leftGroup = spawn('/bin/sleep', ['1000'], { stdio: 'ignore', detached: true });
         console.log(JSON.stringify([inGroup.pid, leftGroup.pid]));
         setInterval(() => {}, 1000);`,
        { subprocesses: 'allow' },
      );
      const line = await new Promise<string>((resolve) => {
        const check = setInterval(() => {
          if (child.stdout.text.includes('\n')) {
            clearInterval(check);
            resolve(child.stdout.text);
          }
        }, 10);
      });
      const grandchildren = JSON.parse(line) as number[];
      expect(await Promise.all(grandchildren.map(isRunning))).toEqual([true, true]);
      await child.close();
      expect(await Promise.all([child.pid, ...grandchildren].map(isRunning))).toEqual([false, false, false]);
    },
  );
});

describe('the tracked process tree', () => {
  it.skipIf(!onLinux)(
    `keeps a descendant that left the group once a sample saw it, after its parent exited${linuxOnly}`,
    async () => {
      // A parent in its own group starts a child in a new session and reports its pid, then waits
      // for a line on stdin before exiting, so the test samples while the parent still lives.
      const parent = spawn(
        process.execPath,
        [
          '-e',
          `const c = require('child_process').spawn('/bin/sleep', ['1000'], { stdio: 'ignore', detached: true });
           console.log(c.pid); process.stdin.once('data', () => process.exit(0));`,
        ],
        { detached: true, stdio: ['pipe', 'pipe', 'ignore'] },
      );
      const escaped = Number(
        await new Promise<string>((resolve) =>
          parent.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString())),
        ),
      );
      const tree = trackedProcessTree(parent.pid!);
      try {
        expect(await tree.sample()).toBeGreaterThan(0);
        const parentExited = new Promise((resolve) => parent.once('exit', resolve));
        parent.stdin.write('go\n');
        await parentExited;
        expect(await isRunning(escaped)).toBe(true);
        // The group is empty now; only the tracking reaches the orphan.
        let gone = false;
        for (let attempt = 0; attempt < 100 && !gone; attempt += 1) gone = await tree.terminate();
        expect(gone).toBe(true);
        expect(await isRunning(escaped)).toBe(false);
      } finally {
        try {
          process.kill(escaped, 'SIGKILL');
        } catch {
          // Already gone, as the test expects.
        }
        parent.kill('SIGKILL');
      }
    },
  );
});
