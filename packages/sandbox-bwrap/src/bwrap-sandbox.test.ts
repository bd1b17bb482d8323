import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ConfigurationError,
  createRuntime,
  type SandboxBackendV1,
  SandboxUnavailableError,
} from '@ghost/core';
import {
  createSandboxWorkspace,
  removeSandboxWorkspace,
  type SandboxProcess,
  type SandboxSpawnSpec,
} from '@ghost/core/sandbox';
import { afterEach, describe, expect, it } from 'vitest';
import { bwrapSandbox, createBwrapSandbox } from './bwrap-sandbox.js';
import { detectCgroups, removeStaleSandboxCgroups } from './cgroups.js';
import { findExecutable } from './find-executable.js';

const node = realpathSync(process.execPath);
// These cases run real sandboxes, so they need bubblewrap; the cgroup cases also a cgroup this
// process may create (root on cgroup v1, or a delegated v2 tree). Where a machine lacks one, the
// case is skipped and its name says which, as on a developer laptop without bubblewrap; CI installs it.
const hasBwrap = (await findExecutable('bwrap')) !== undefined;
const cgroups = hasBwrap ? await detectCgroups() : undefined;
const noBwrap = hasBwrap ? '' : ' (skipped: bubblewrap is not installed here)';
const noCgroup = cgroups?.memoryParent ? '' : ' (skipped: this process may not create a memory cgroup here)';
const noPidsCgroup = cgroups?.pidsParent ? '' : ' (skipped: this process may not create a pids cgroup here)';
// Which identity programs get depends on whether this process is root; the other parent's cases
// skip and say so (bwrap-non-root-parent.test.ts runs a non-root parent from a root one).
const isRootParent = process.getuid?.() === 0;
const noRootParent = isRootParent ? '' : ' (skipped: identity cases need a root parent)';

const started: SandboxProcess[] = [];
const directories: string[] = [];
const workspaces: string[] = [];

afterEach(async () => {
  await Promise.allSettled(started.splice(0).map((child) => child.close()));
  await Promise.all(workspaces.splice(0).map((path) => removeSandboxWorkspace(path)));
  await Promise.all(directories.splice(0).map((path) => rm(path, { recursive: true, force: true })));
});

/** A workspace from the kit, as every caller of a backend makes one. */
async function makeWorkspace(): Promise<string> {
  const path = await createSandboxWorkspace({ prefix: 'ghost-bwrap-test-' });
  workspaces.push(path);
  return path;
}

async function temporaryDirectory(prefix: string): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  directories.push(path);
  return path;
}

/** Runs a Node script in the sandbox and waits for it to end. */
async function runNode(
  script: string,
  spec: Partial<SandboxSpawnSpec> = {},
  backend: SandboxBackendV1 = bwrapSandbox,
) {
  const made = await makeWorkspace();
  const child = await backend.spawn({
    command: node,
    args: ['-e', script],
    env: {},
    runtimePaths: [],
    workspace: made,
    ...spec,
  });
  started.push(child);
  const exit = await child.exited;
  return { exit, stdout: child.stdout.text, stderr: child.stderr.text, child, workspace: made };
}

describe('bwrapSandbox', () => {
  it.skipIf(!hasBwrap)(
    `detects itself as available here and enforcing every capability${noBwrap}`,
    async () => {
      const detection = await bwrapSandbox.detect();
      expect(detection.available).toBe(true);
      expect(detection.capabilities).toMatchObject({
        processTreeOwnership: true,
        subprocessDenial: true,
        networkIsolation: true,
        filesystemIsolation: true,
        memoryLimit: true,
        cpuLimit: true,
        fileSizeLimit: true,
        openFilesLimit: true,
        syscallFilter: true,
        environmentIsolation: true,
        processLimit: cgroups?.pidsParent !== undefined,
      });
      expect(detection.checks?.map((check) => check.name)).toEqual([
        'bubblewrap',
        'namespaces',
        'identity',
        'filesystem',
        'seccomp',
        'privileges',
        'rlimits',
        'memory limit',
        'process limit',
      ]);
      const identity = detection.checks?.find((check) => check.name === 'identity');
      expect(identity?.status).toBe('enforced');
      expect(identity?.detail).toMatch(
        isRootParent
          ? /^the parent is root, so each program runs as an identity no other sandbox has, uid and gid 2113929216 \+ the pid of its launcher \(up to 2118123519\), never as root/
          : new RegExp(
              `^programs run as uid ${process.getuid?.()}, gid ${process.getgid?.()}, the parent's own`,
            ),
      );
    },
  );

  it.skipIf(!hasBwrap)(
    `shows the program only its command, libraries, runtime paths and workspace, read-only but for the workspace${noBwrap}`,
    async () => {
      const runtime = await temporaryDirectory('ghost-bwrap-runtime-');
      // Readable by everyone, as runtime paths are: a root parent's programs run unprivileged.
      await chmod(runtime, 0o755);
      await writeFile(join(runtime, 'data.txt'), 'runtime file');
      const { exit, stdout } = await runNode(
        `const fs = require('fs');
         const tryWrite = (path) => { try { fs.writeFileSync(path, 'x'); return 'written'; } catch (e) { return e.code; } };
         console.log(JSON.stringify({
           root: fs.readdirSync('/').sort(),
           runtime: fs.readFileSync(${JSON.stringify(join(runtime, 'data.txt'))}, 'utf8'),
           usrBin: fs.existsSync('/usr/bin/bash') || fs.existsSync('/bin/bash'),
           etc: fs.existsSync('/etc/passwd'),
           writeRoot: tryWrite('/new-file'),
           writeRuntime: tryWrite(${JSON.stringify(join(runtime, 'new.txt'))}),
           writeShm: tryWrite('/dev/shm/x'),
           writeWorkspace: tryWrite('in-workspace.txt'),
           cwd: process.cwd(),
         }));`,
        { runtimePaths: [runtime] },
      );
      expect(exit).toEqual({ code: 0, signal: null });
      const seen = JSON.parse(stdout);
      expect(seen).toMatchObject({
        runtime: 'runtime file',
        usrBin: false,
        etc: false,
        writeRoot: 'EROFS',
        writeRuntime: 'EROFS',
        writeShm: 'EROFS',
        writeWorkspace: 'written',
      });
      expect(seen.root).toEqual(expect.arrayContaining(['dev', 'proc']));
      expect(seen.root).not.toContain('etc');
      expect(existsSync(join(runtime, 'new.txt'))).toBe(false);
    },
  );

  it.skipIf(!hasBwrap)(
    `gives the program exactly its environment and pid 2 in its own pid namespace${noBwrap}`,
    async () => {
      process.env.GHOST_BWRAP_TEST_SECRET = 'sk-should-not-leak';
      try {
        const { stdout, workspace } = await runNode(
          'console.log(JSON.stringify({ env: process.env, pid: process.pid, environ: require("fs").readFileSync("/proc/self/environ", "utf8") }))',
          { env: { GHOST_SETTING: 'on' } },
        );
        const seen = JSON.parse(stdout);
        // bubblewrap always sets PWD, the working directory; nothing else is added.
        expect(seen.env).toEqual({ GHOST_SETTING: 'on', PWD: workspace });
        expect(seen.environ).not.toContain('sk-should-not-leak');
        expect(seen.pid).toBe(2);
      } finally {
        delete process.env.GHOST_BWRAP_TEST_SECRET;
      }
    },
  );

  it.skipIf(!hasBwrap)(
    `carries frames both ways on fd 3 and further channels on fd 4${noBwrap}`,
    async () => {
      const workspace = await makeWorkspace();
      const child = await bwrapSandbox.spawn({
        command: node,
        args: [
          '-e',
          `const net = require('net');
         const channel = new net.Socket({ fd: 3 });
         const second = new net.Socket({ fd: 4 });
         channel.on('data', (data) => { channel.end('echo:' + data); second.end('second'); });`,
        ],
        env: {},
        runtimePaths: [],
        workspace,
        extraFds: 2,
      });
      started.push(child);
      expect(child.channels).toHaveLength(2);
      const read = (stream: NodeJS.ReadableStream) =>
        new Promise<string>((resolve) => {
          let text = '';
          stream.on('data', (chunk) => (text += chunk));
          stream.on('end', () => resolve(text));
        });
      const replies = Promise.all([read(child.channel), read(child.channels[1]!)]);
      child.channel.write('ping');
      expect(await replies).toEqual(['echo:ping', 'second']);
      expect(await child.exited).toEqual({ code: 0, signal: null });
    },
  );

  it.skipIf(!hasBwrap)(`denies subprocesses when asked, and allows them otherwise${noBwrap}`, async () => {
    const script = `const r = require('child_process').spawnSync(process.execPath, ['-e', 'console.log(7)']);
      console.log(r.error ? r.error.code : String(r.stdout).trim());`;
    expect((await runNode(script, { subprocesses: 'deny' })).stdout.trim()).toBe('EPERM');
    expect((await runNode(script, { subprocesses: 'allow' })).stdout.trim()).toBe('7');
  });

  // Needs a working bubblewrap (setup installs it on Linux as root, so CI runs it); the title says why.
  it.skipIf(!hasBwrap)(`isolates the network unless 'shared' is asked for${noBwrap}`, async () => {
    const script = `const s = require('net').connect(9, '127.0.0.1');
      s.on('error', (e) => console.log(e.code)); s.on('connect', () => { console.log('connected'); s.destroy(); });`;
    // No network: the socket call itself is refused by seccomp, before any route is looked up.
    expect((await runNode(script)).stdout.trim()).toBe('EAFNOSUPPORT');
    // The shared network: the connection is really attempted (nothing listens on port 9).
    expect((await runNode(script, { network: 'shared' })).stdout.trim()).toBe('ECONNREFUSED');
  });

  it.skipIf(!hasBwrap)(`ends a CPU spin at cpuSeconds and names the limit${noBwrap}`, async () => {
    const { exit } = await runNode('for (;;) {}', { limits: { cpuSeconds: 1 } });
    expect(exit).toMatchObject({ code: null, signal: 'SIGXCPU', limitExceeded: 'cpuSeconds' });
  });

  it.skipIf(!hasBwrap)(`stops a file from growing past fileBytes${noBwrap}`, async () => {
    const { stdout, exit } = await runNode(
      `process.on('SIGXFSZ', () => {});
       try { require('fs').writeFileSync('big', Buffer.alloc(2_000_000)); console.log('written'); }
       catch (e) { console.log(e.code); }`,
      { limits: { fileBytes: 1_000_000 } },
    );
    expect(exit.code).toBe(0);
    expect(stdout.trim()).toBe('EFBIG');
  });

  it.skipIf(!hasBwrap)(`stops opening files past openFiles${noBwrap}`, async () => {
    const { stdout } = await runNode(
      `const fs = require('fs'); const fds = [];
       try { for (let i = 0; i < 1000; i++) fds.push(fs.openSync('/proc/self/status', 'r')); console.log('opened all'); }
       catch (e) { console.log(e.code, fds.length < 64); }`,
      { limits: { openFiles: 64 } },
    );
    expect(stdout.trim()).toBe('EMFILE true');
  });

  // Needs a memory cgroup this process may create (cgroup v1, or v2 delegated to it); on a machine
  // without one the backend samples memory instead, which the 'by sampling when cgroups are off' case below covers.
  it.skipIf(!hasBwrap || !cgroups?.memoryParent)(
    `kills a memory bomb at memoryBytes through the cgroup, names the limit and removes the cgroup${noBwrap || noCgroup}`,
    async () => {
      const before = await readdir(cgroups!.memoryParent!);
      const { exit, child } = await runNode(
        'const kept = []; for (;;) kept.push(Buffer.alloc(16 * 1024 * 1024, 1));',
        { limits: { memoryBytes: 128 * 1024 * 1024 } },
      );
      expect(exit).toMatchObject({ signal: 'SIGKILL', limitExceeded: 'memoryBytes' });
      await child.close();
      expect(await readdir(cgroups!.memoryParent!)).toEqual(before);
    },
  );

  it.skipIf(!hasBwrap)(
    `kills a memory bomb at memoryBytes by sampling when cgroups are off, and then refuses a process limit${noBwrap}`,
    async () => {
      const sampled = createBwrapSandbox({ cgroups: 'off' });
      const detection = await sampled.detect();
      expect(detection.capabilities.memoryLimit).toBe(true);
      expect(detection.capabilities.processLimit).toBe(false);
      expect(detection.checks?.find((check) => check.name === 'memory limit')?.status).toBe('fallback');
      const { exit } = await runNode(
        // Slow enough growth that the 50 ms samples see it pass the limit.
        'const kept = []; setInterval(() => kept.push(Buffer.alloc(8 * 1024 * 1024, 1)), 5);',
        { limits: { memoryBytes: 128 * 1024 * 1024 } },
        sampled,
      );
      expect(exit).toMatchObject({ signal: 'SIGKILL', limitExceeded: 'memoryBytes' });
      const workspace = await makeWorkspace();
      await expect(
        sampled.spawn({
          command: node,
          args: [],
          env: {},
          runtimePaths: [],
          workspace,
          limits: { processes: 8 },
        }),
      ).rejects.toThrow(/cannot enforce processes/);
    },
  );

  it.skipIf(!hasBwrap || !cgroups?.pidsParent)(
    `bounds the number of processes with the pids cgroup${noBwrap || noPidsCgroup}`,
    async () => {
      const { stdout } = await runNode(
        `const { spawn } = require('child_process'); let started = 0, refused = 0;
         for (let i = 0; i < 100; i++) {
           try { const c = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 5000)']); c.on('error', () => {}); if (c.pid) started++; else refused++; }
           catch { refused++; }
         }
         console.log(JSON.stringify({ started, refused })); process.exit(0);`,
        { limits: { processes: 24 } },
      );
      const { started: count, refused } = JSON.parse(stdout);
      expect(count).toBeLessThan(24);
      expect(refused).toBeGreaterThan(0);
    },
  );

  // Stale cgroups can only exist, and be swept, where this process may create memory cgroups.
  it.skipIf(!cgroups?.memoryParent)(
    `removes the empty cgroups a Ghost process that died without cleaning up left behind${noCgroup}`,
    async () => {
      const gone = spawnSync(process.execPath, ['-e', '0']).pid!;
      const stale = join(cgroups!.memoryParent!, `ghost-sandbox-${gone}-0123abcd`);
      const ours = join(cgroups!.memoryParent!, `ghost-sandbox-${process.pid}-0123abcd`);
      await mkdir(stale);
      await mkdir(ours);
      try {
        expect(await removeStaleSandboxCgroups(cgroups!)).toBeGreaterThanOrEqual(1);
        expect(existsSync(stale)).toBe(false);
        expect(existsSync(ours)).toBe(true);
      } finally {
        await rmdir(stale).catch(() => undefined);
        await rmdir(ours);
      }
    },
  );

  it.skipIf(!hasBwrap)(
    `leaves nothing of a setsid, double-forked background child after close${noBwrap}`,
    async () => {
      const workspace = await makeWorkspace();
      const marker = `ghost-orphan-${process.pid}-${Date.now()}`;
      const child = await bwrapSandbox.spawn({
        command: node,
        args: [
          '-e',
          `const { spawn } = require('child_process');
         const grandchild = \`require('child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', '${marker}'], { detached: true, stdio: 'ignore' }).unref()\`;
         spawn(process.execPath, ['-e', grandchild], { detached: true, stdio: 'ignore' }).unref();
         setTimeout(() => console.log('started'), 500); setInterval(() => {}, 1000);`,
        ],
        env: {},
        runtimePaths: [],
        workspace,
      });
      started.push(child);
      await waitFor(async () => (await processesWithMarker(marker)).length > 0);
      await child.close();
      expect(await processesWithMarker(marker)).toEqual([]);
      expect(existsSync(workspace)).toBe(false);
    },
  );

  it.skipIf(!hasBwrap)(`rejects bad specs with typed errors${noBwrap}`, async () => {
    const workspace = await makeWorkspace();
    const spec = { command: node, args: [], env: {}, runtimePaths: [], workspace };
    await expect(bwrapSandbox.spawn({ ...spec, command: 'node' })).rejects.toBeInstanceOf(ConfigurationError);
    await expect(bwrapSandbox.spawn({ ...spec, workspace: join(workspace, 'missing') })).rejects.toThrow(
      /workspace .* does not exist/,
    );
    await expect(bwrapSandbox.spawn({ ...spec, runtimePaths: [join(workspace, 'missing')] })).rejects.toThrow(
      /runtimePaths\[0\] .* cannot be used/,
    );
    await expect(
      bwrapSandbox.spawn({ ...spec, limits: { memoryBytes: 1e8, sizeBytes: 1 } as never }),
    ).rejects.toThrow(/Unknown sandbox limit "sizeBytes"/);
  });
});

describe('bwrapSandbox with a root parent', () => {
  it.skipIf(!hasBwrap || !isRootParent)(
    `runs each program as an identity of its own from the configured range, hands it the workspace, and still removes it on close${noBwrap || noRootParent}`,
    async () => {
      const first = 3_000_000_000;
      const backend = createBwrapSandbox({ unprivilegedIds: { first, count: 4_194_304 } });
      const identity = (await backend.detect()).checks?.find((check) => check.name === 'identity');
      expect(identity?.detail).toMatch(
        /each program runs as an identity no other sandbox has, uid and gid 3000000000 \+ the pid of its launcher \(up to 3004194303\), never as root/,
      );
      const script = `const fs = require('fs');
         fs.writeFileSync('made-here', 'x');
         const status = fs.readFileSync('/proc/self/status', 'utf8');
         console.log(JSON.stringify({ uid: process.getuid(), gid: process.getgid(), groups: (status.match(/^Groups:(.*)$/m) || [])[1].trim(), made: fs.statSync('made-here').uid, noNewPrivs: /NoNewPrivs:\\s*1/.test(status) }));
         setTimeout(() => {}, 200);`;
      // Two at once: they must not share an identity.
      const [one, two] = await Promise.all([runNode(script, {}, backend), runNode(script, {}, backend)]);
      for (const { exit, stdout, workspace: made, child } of [one, two]) {
        const id = first + child.pid;
        expect(exit).toEqual({ code: 0, signal: null });
        expect(JSON.parse(stdout)).toEqual({ uid: id, gid: id, groups: '', made: id, noNewPrivs: true });
        expect(await stat(made)).toMatchObject({ uid: id, gid: id });
      }
      expect(JSON.parse(one.stdout).uid).not.toBe(JSON.parse(two.stdout).uid);
      await one.child.close();
      expect(existsSync(one.workspace)).toBe(false);
    },
  );

  it.skipIf(!hasBwrap || !isRootParent)(
    `refuses a runtime path the identity cannot read, saying which and what to do${noBwrap || noRootParent}`,
    async () => {
      const runtime = await temporaryDirectory('ghost-bwrap-runtime-');
      await chmod(runtime, 0o700);
      const workspace = await makeWorkspace();
      const spawning = bwrapSandbox.spawn({
        command: node,
        args: [],
        env: {},
        runtimePaths: [runtime],
        workspace,
      });
      await expect(spawning).rejects.toBeInstanceOf(ConfigurationError);
      await expect(spawning).rejects.toThrow(
        /runtimePaths\[0\] .* is mode 700, owner 0: programs run as an unprivileged identity of their own, with no groups, because this process is root, and cannot read and search it\. Let others read and search it \(chmod o\+rx\)/,
      );
    },
  );
});

describe('bwrap on a machine where it cannot run', () => {
  it('says bubblewrap is missing and how to install it, and code mode refuses', async () => {
    const missing = createBwrapSandbox({ bwrapPath: '/nonexistent/bwrap' });
    const detection = await missing.detect();
    expect(detection.available).toBe(false);
    expect(detection.reason).toMatch(/does not exist or is not executable/);
    expect(Object.values(detection.capabilities).every((enforced) => !enforced)).toBe(true);
    const workspace = await makeWorkspace();
    await expect(
      missing.spawn({ command: node, args: [], env: {}, runtimePaths: [], workspace }),
    ).rejects.toBeInstanceOf(SandboxUnavailableError);
  });

  it('turns bubblewrap refusing to create namespaces into what to do about it', async () => {
    // A stand-in for bwrap where the kernel refuses it: it fails the way bwrap does in an
    // unprivileged container, so detect() must report that instead of guessing.
    const directory = await temporaryDirectory('ghost-bwrap-refusing-');
    const refusing = join(directory, 'bwrap');
    await writeFile(
      refusing,
      '#!/bin/sh\n[ "$1" = --version ] && { echo "bubblewrap 0.8.0"; exit 0; }\necho "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2\nexit 1\n',
    );
    await chmod(refusing, 0o755);
    const detection = await createBwrapSandbox({ bwrapPath: refusing }).detect();
    expect(detection.available).toBe(false);
    // A root parent's sandbox has no user namespace, so the advice differs.
    expect(detection.reason).toMatch(
      isRootParent
        ? /sets up a root parent's sandbox without a user namespace, which needs CAP_SYS_ADMIN.*run Ghost as a non-root user/
        : /not allowed to create namespaces here/,
    );
    expect(detection.reason).toMatch(/No permissions to creating new namespace/);
    expect(detection.checks?.find((check) => check.name === 'namespaces')?.status).toBe('missing');
  });

  it('rejects an unknown cgroups option at creation', () => {
    expect(() => createBwrapSandbox({ cgroups: 'always' as never })).toThrow(ConfigurationError);
  });

  it('rejects a range of unprivileged ids that holds root or is not whole numbers, and the old single identity, at creation', () => {
    expect(() => createBwrapSandbox({ unprivilegedIds: { first: 0, count: 10 } })).toThrow(
      /unprivilegedIds.first must be a whole number from 1 to 4294967294 \(0 is root\), got 0/,
    );
    expect(() => createBwrapSandbox({ unprivilegedIds: { first: 10, count: 0 } })).toThrow(
      ConfigurationError,
    );
    expect(() => createBwrapSandbox({ unprivilegedIds: { first: 1.5, count: 2 } })).toThrow(
      ConfigurationError,
    );
    expect(() => createBwrapSandbox({ unprivilegedIds: { first: 2 ** 32 - 10, count: 20 } })).toThrow(
      /unprivilegedIds.count must be a whole number from 1 to 9/,
    );
    expect(() => createBwrapSandbox({ unprivilegedIds: null as never })).toThrow(ConfigurationError);
    expect(() => createBwrapSandbox({ unprivilegedIdentity: { uid: 23456, gid: 34567 } } as never)).toThrow(
      /unprivilegedIdentity is gone: every program now runs as an identity of its own/,
    );
  });

  it.skipIf(!hasBwrap || !isRootParent)(
    `is unavailable, saying what to do, when the range of ids is smaller than the kernel's pid_max${noBwrap || noRootParent}`,
    async () => {
      const backend = createBwrapSandbox({
        unprivilegedIds: { first: 3_000_000_000, count: 100 },
        detectionCache: 'off',
      });
      const detection = await backend.detect();
      expect(detection.available).toBe(false);
      expect(detection.reason).toMatch(
        /unprivilegedIds holds 100 ids and pids here go up to \d+ \(kernel.pid_max\)/,
      );
    },
  );

  it.skipIf(!hasBwrap)(
    `is what the registry loads for 'bwrap' and, on Linux, 'native'${noBwrap}`,
    async () => {
      const runtime = createRuntime({ importModule: (specifier) => import(specifier) });
      expect(await runtime.registry.sandbox('bwrap')).toBe(bwrapSandbox);
      if (process.platform === 'linux') expect(await runtime.registry.sandbox('native')).toBe(bwrapSandbox);
    },
  );
});

async function processesWithMarker(marker: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const command = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    const state = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    if (command.includes(marker) && !/\) [ZX] /.test(state)) found.push(Number(entry));
  }
  return found;
}

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the condition');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
