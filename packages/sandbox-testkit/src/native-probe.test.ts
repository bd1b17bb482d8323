import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { compileNativeProbe } from './native-probe.js';
import { inheritableDescriptors } from './outside-descriptors.js';

const run = promisify(execFile);

const directory = await mkdtemp(join(tmpdir(), 'ghost-testkit-probe-test-'));
afterAll(() => rm(directory, { recursive: true, force: true }));
const linuxProbe = await compileNativeProbe(await mkdtemp(join(directory, 'linux-')), 'linux');
const macProbe = await compileNativeProbe(await mkdtemp(join(directory, 'darwin-')), 'darwin');
const isLinux = process.platform === 'linux';
const missing = 'missingReason' in linuxProbe ? linuxProbe.missingReason : undefined;
const where = !isLinux
  ? `skipped: this is ${process.platform}`
  : missing === undefined
    ? 'Linux'
    : `skipped: ${missing}`;

/** This process's descriptors above stderr without close-on-exec, as Linux's /proc/self/fdinfo names them. */
async function inheritableFromProc(): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc/self/fdinfo')) {
    const fd = Number(entry);
    const info = await readFile(`/proc/self/fdinfo/${entry}`, 'utf8').catch(() => '');
    const flags = /^flags:\s*([0-7]+)$/m.exec(info)?.[1];
    // O_CLOEXEC is 02000000 in fdinfo's octal flags.
    if (fd > 2 && flags !== undefined && (Number.parseInt(flags, 8) & 0o2000000) === 0) found.push(fd);
  }
  return found.sort((left, right) => left - right);
}

/** Runs the probe with `extraPipes` pipes beyond stdio, as a parent passing descriptors on would. */
async function descriptorsSeenWith(probePath: string, extraPipes: number): Promise<number[]> {
  const child = spawn(probePath, ['fds'], {
    stdio: ['ignore', 'pipe', 'pipe', ...Array(extraPipes).fill('pipe')],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  await new Promise((resolve) => child.once('close', resolve));
  return (JSON.parse(output) as { fds: number[] }).fds;
}

describe.skipIf(!isLinux || missing !== undefined)(
  `the native probe, built on this machine (${where})`,
  () => {
    it('as macOS builds it (only the POSIX modes, no -static), lists exactly the descriptors it was given', async () => {
      expect(macProbe).toHaveProperty('path');
      const path = (macProbe as { path: string }).path;
      expect(await descriptorsSeenWith(path, 2)).toEqual([0, 1, 2, 3, 4, ...(await inheritableFromProc())]);
      // The Linux-only modes are not in it, and say so rather than pretend to try.
      await expect(run(path, ['ptrace'])).rejects.toMatchObject({ code: 2, stderr: 'unknown mode ptrace\n' });
    });

    it('as Linux builds it, has every mode and lists the same descriptors', async () => {
      const path = (linuxProbe as { path: string }).path;
      expect(await descriptorsSeenWith(path, 2)).toEqual([0, 1, 2, 3, 4, ...(await inheritableFromProc())]);
      const { stdout } = await run(path, ['userns']);
      expect(JSON.parse(stdout)).toHaveProperty('unshare');
    });

    it("finds this process's inheritable descriptors, as /proc/self/fdinfo names them (the control)", async () => {
      expect(await inheritableDescriptors((macProbe as { path: string }).path)).toEqual(
        await inheritableFromProc(),
      );
    });
  },
);

describe('compileNativeProbe', () => {
  it('names the platform it does not build for', async () => {
    expect(await compileNativeProbe(directory, 'win32')).toEqual({
      missingReason: 'the native probe is built on Linux and macOS only, this is win32',
    });
  });
});
