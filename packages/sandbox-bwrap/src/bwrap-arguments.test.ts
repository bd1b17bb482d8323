import type { SandboxSpawnPlan } from '@ghost/core';
import { describe, expect, it } from 'vitest';
import { bwrapArguments } from './bwrap-arguments.js';

const plan: SandboxSpawnPlan = {
  command: '/usr/bin/node',
  args: ['host.js', '--flag'],
  env: { GHOST_MODE: 'host' },
  runtimePaths: ['/opt/app/node_modules/engine', '/opt/app'],
  workspace: '/tmp/ghost-program-1',
  cwd: '/tmp/ghost-program-1',
  network: 'none',
  subprocesses: 'deny',
  extraFds: 1,
  limits: {},
  signal: undefined,
};

/** The values that follow each occurrence of `flag`. */
function valuesOf(args: string[], flag: string, count = 1): string[][] {
  return args.flatMap((arg, index) => (arg === flag ? [args.slice(index + 1, index + 1 + count)] : []));
}

describe('bwrapArguments', () => {
  const args = bwrapArguments(plan, {
    sharedLibraries: ['/lib64/ld-linux-x86-64.so.2'],
    seccompFd: 4,
    infoFd: 5,
  });

  it('unshares every namespace, drops capabilities and starts a new session', () => {
    for (const flag of [
      '--unshare-user',
      '--unshare-pid',
      '--unshare-ipc',
      '--unshare-uts',
      '--unshare-cgroup',
      '--unshare-net',
    ]) {
      expect(args).toContain(flag);
    }
    expect(args).toEqual(
      expect.arrayContaining(['--die-with-parent', '--new-session', '--disable-userns', '--clearenv']),
    );
    expect(valuesOf(args, '--cap-drop')).toEqual([['ALL']]);
  });

  it('binds the runtime read-only, parents first, and only the workspace writable', () => {
    expect(valuesOf(args, '--ro-bind', 2)).toEqual([
      ['/lib64/ld-linux-x86-64.so.2', '/lib64/ld-linux-x86-64.so.2'],
      ['/opt/app', '/opt/app'],
      ['/usr/bin/node', '/usr/bin/node'],
      ['/opt/app/node_modules/engine', '/opt/app/node_modules/engine'],
    ]);
    expect(valuesOf(args, '--bind', 2)).toEqual([['/tmp/ghost-program-1', '/tmp/ghost-program-1']]);
    expect(valuesOf(args, '--remount-ro')).toEqual([['/'], ['/dev']]);
  });

  it('sets exactly the planned environment, the fds and the command', () => {
    expect(valuesOf(args, '--setenv', 2)).toEqual([['GHOST_MODE', 'host']]);
    expect(valuesOf(args, '--seccomp')).toEqual([['4']]);
    expect(valuesOf(args, '--info-fd')).toEqual([['5']]);
    expect(args.slice(args.indexOf('--'))).toEqual(['--', '/usr/bin/node', 'host.js', '--flag']);
  });

  it("shares the host's network only when asked", () => {
    const shared = bwrapArguments({ ...plan, network: 'host' }, { sharedLibraries: [], infoFd: 4 });
    expect(shared).not.toContain('--unshare-net');
    expect(shared).not.toContain('--seccomp');
  });
});
