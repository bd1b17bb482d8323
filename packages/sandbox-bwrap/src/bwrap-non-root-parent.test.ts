import { execFile } from 'node:child_process';
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { findExecutable } from './find-executable.js';
import { builtEntry, builtKit, isBuildCurrent } from './test-support/built-packages.js';

const run = promisify(execFile);

// A root test process cannot be a non-root parent itself, so these cases start one: Node as an
// unused uid (through setpriv), using the built package in dist/ as any non-root user's Ghost
// would, and read what it reports. Run as another user, the other test files cover that parent.
const nonRootUid = 65533;

const isRootParent = process.getuid?.() === 0;
const setpriv = await findExecutable('setpriv');
const hasBwrap = (await findExecutable('bwrap')) !== undefined;

/**
 * Whether a user with no rights of its own can run this Node binary: every directory above it
 * searchable by others and the file executable by them (the suite's LTS Node lives in root's
 * cache folder, which is not).
 */
function isNodeRunnableByOthers(): boolean {
  const binary = realpathSync(process.execPath);
  const searchable = (path: string) => (statSync(path).mode & 0o001) !== 0;
  for (let directory = dirname(binary); ; directory = dirname(directory)) {
    if (!searchable(directory)) return false;
    if (directory === dirname(directory)) return searchable(binary);
  }
}

const skipReason = !isRootParent
  ? 'this test process is not root: it is a non-root parent itself, which the other files cover'
  : !hasBwrap
    ? 'bubblewrap is not installed here'
    : setpriv === undefined
      ? 'setpriv (util-linux) is needed to start a non-root parent'
      : !isBuildCurrent()
        ? "dist/ (this package's or @ghost/core's) is older than src/ or missing: run pnpm build (pnpm test builds first)"
        : !isNodeRunnableByOthers()
          ? `${process.execPath} is not reachable by a user with no rights of its own`
          : undefined;
const skipped = skipReason === undefined ? '' : ` (skipped: ${skipReason})`;

/**
 * The non-root parent: detects the backend, prints ghost-doctor's report, and runs one probe
 * program that looks at who it is and what it can reach, then at the file it left in its workspace.
 */
const parentScript = `
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
const { createBwrapSandbox, formatDoctorReport } = await import(process.argv[1]);
const { createSandboxWorkspace } = await import(process.argv[4]);
const backend = createBwrapSandbox({ cgroups: 'off' });
const detection = await backend.detect();
const workspace = await createSandboxWorkspace({ prefix: 'ghost-non-root-parent-' });
const child = await backend.spawn({ command: process.argv[2], args: ['-e', process.argv[3]], env: {}, runtimePaths: [], workspace });
const exit = await child.exited;
const made = await stat(join(workspace, 'escalate')).catch(() => undefined);
await child.close();
const workspaceRemoved = await stat(workspace).then(() => false, () => true);
console.log(JSON.stringify({
  doctor: formatDoctorReport('bwrap', detection),
  exit,
  stderr: child.stderr.text,
  probe: JSON.parse(child.stdout.text),
  made: made && { uid: made.uid, mode: made.mode },
  workspaceRemoved,
  workspaceFolder: await stat(join(workspace, '..')).then((folder) => ({ uid: folder.uid, mode: folder.mode & 0o777 })),
}));
`;

/** The sandboxed program: who it is, and what of the machine and of pid 1 it can reach. */
const probeScript = `
const fs = require('fs');
const os = require('os');
const attempt = (action) => { try { action(); return 'allowed'; } catch (error) { return error.code; } };
const read = (path) => { try { return fs.readFileSync(path, 'latin1'); } catch (error) { return error.code; } };
const status = fs.readFileSync('/proc/self/status', 'utf8');
const cwd = process.cwd();
const mount = fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\\n').map((line) => line.split(' ')).filter((fields) => fields[4] === cwd).pop();
fs.writeFileSync('escalate', '#!/bin/sh\\n');
console.log(JSON.stringify({
  uid: status.match(/^Uid:\\s*(.*)$/m)[1],
  uidMap: read('/proc/self/uid_map').trim().split(/\\s+/),
  sysctlWrite: attempt(() => fs.writeFileSync('/proc/sys/fs/lease-break-time', '99')),
  pidOneMemory: attempt(() => fs.closeSync(fs.openSync('/proc/1/mem', 'r'))),
  pidOneEnvironment: read('/proc/1/environ'),
  hostname: os.hostname(),
  commandLine: read('/proc/cmdline'),
  mountOptions: mount && mount[5].split(','),
  setuid: attempt(() => fs.chmodSync('escalate', 0o4755)),
}));
`;

describe('bwrap with a non-root parent', () => {
  it.skipIf(skipReason !== undefined)(
    `runs programs as the parent's uid in a user namespace, with /proc/sys read-only, pid 1 covered and the machine's details hidden, and ghost-doctor says so${skipped}`,
    async () => {
      const leaseBreakTime = readFileSync('/proc/sys/fs/lease-break-time', 'utf8');
      const { stdout } = await run(
        setpriv!,
        [
          `--reuid=${nonRootUid}`,
          `--regid=${nonRootUid}`,
          '--clear-groups',
          '--',
          process.execPath,
          '--input-type=module',
          '-e',
          parentScript,
          builtEntry,
          realpathSync(process.execPath),
          probeScript,
          builtKit,
        ],
        { env: {}, cwd: '/', timeout: 60_000 },
      );
      const seen = JSON.parse(stdout);
      expect(seen.doctor).toMatch(
        new RegExp(
          `\\n {2}ok {3}identity +programs run as uid ${nonRootUid}, gid ${nonRootUid}, the parent's own, mapped alone into a user namespace of each program's own`,
        ),
      );
      expect(seen.doctor).toMatch(/\n {2}ok {3}namespaces +user \(nested ones disabled\), pid/);
      expect(seen.exit, seen.stderr).toEqual({ code: 0, signal: null });
      const uid = String(nonRootUid);
      expect(seen.probe).toMatchObject({
        uid: `${uid}\t${uid}\t${uid}\t${uid}`,
        pidOneMemory: 'ENOENT',
        pidOneEnvironment: 'ENOENT',
        hostname: 'sandbox',
        commandLine: '',
        setuid: 'allowed',
      });
      // The uid maps to bubblewrap's user namespace, where it is the parent's own.
      expect(seen.probe.uidMap[0]).toBe(uid);
      expect(seen.probe.sysctlWrite).not.toBe('allowed');
      expect(readFileSync('/proc/sys/fs/lease-break-time', 'utf8')).toBe(leaseBreakTime);
      expect(seen.probe.mountOptions).toEqual(expect.arrayContaining(['nosuid', 'nodev']));
      expect(seen.made).toMatchObject({ uid: nonRootUid });
      expect(seen.workspaceRemoved).toBe(true);
      // The workspace was in a folder only the parent's user can enter.
      expect(seen.workspaceFolder).toEqual({ uid: nonRootUid, mode: 0o700 });
    },
  );
});
