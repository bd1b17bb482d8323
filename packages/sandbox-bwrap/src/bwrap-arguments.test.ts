import type { SandboxPathPlan, SandboxSpawnPlan } from '@ghost/core/sandbox';
import { describe, expect, it } from 'vitest';
import { bwrapArguments, programIdPositions, sandboxHostname } from './bwrap-arguments.js';
import type { BwrapIdentity } from './bwrap-identity.js';

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

/** The plan's paths as `planSandboxPaths` finds them when none is a link. */
const paths: SandboxPathPlan = {
  readPaths: plan.runtimePaths,
  workspace: plan.workspace,
  cwd: plan.cwd,
  links: [],
};

/** The values that follow each occurrence of `flag`. */
function valuesOf(args: string[], flag: string, count = 1): string[][] {
  return args.flatMap((arg, index) => (arg === flag ? [args.slice(index + 1, index + 1 + count)] : []));
}

const parentIdentity: BwrapIdentity = { kind: 'parent', uid: 1000, gid: 1000 };
const droppedIdentity: BwrapIdentity = {
  kind: 'dropped',
  ids: { first: 2_113_929_216, count: 4_194_304 },
  setpriv: '/usr/bin/setpriv',
  setprivLibraries: ['/lib/libcap-ng.so.0', '/lib64/ld-linux-x86-64.so.2'],
};

describe('bwrapArguments', () => {
  const args = bwrapArguments(plan, {
    paths,
    sharedLibraries: ['/lib64/ld-linux-x86-64.so.2'],
    identity: parentIdentity,
    seccompFd: 4,
    emptyFileFd: 5,
    infoFd: 6,
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
      ['/proc/sys', '/proc/sys'],
    ]);
    expect(valuesOf(args, '--bind', 2)).toEqual([['/tmp/ghost-program-1', '/tmp/ghost-program-1']]);
    expect(valuesOf(args, '--remount-ro')).toEqual([['/proc/1'], ['/'], ['/dev']]);
  });

  it('makes the directories leading to the binds searchable by anyone, before any bind, and none inside one', () => {
    const firstBind = args.findIndex((arg) => arg === '--ro-bind' || arg === '--bind');
    expect(args.slice(args.indexOf('/'), firstBind)).toEqual([
      '/',
      '--perms',
      '0755',
      '--dir',
      '/lib64',
      '--perms',
      '0755',
      '--dir',
      '/opt',
      '--perms',
      '0755',
      '--dir',
      '/tmp',
      '--perms',
      '0755',
      '--dir',
      '/usr',
      '--perms',
      '0755',
      '--dir',
      '/usr/bin',
    ]);
  });

  it('lays /proc/sys read-only, an empty file on /proc/cmdline and an empty directory on /proc/1 over the fresh /proc', () => {
    const afterProc = args.slice(args.indexOf('--proc'), args.indexOf('--dev'));
    expect(afterProc).toEqual([
      '--proc',
      '/proc',
      '--ro-bind',
      '/proc/sys',
      '/proc/sys',
      '--perms',
      '0444',
      '--ro-bind-data',
      '5',
      '/proc/cmdline',
      '--tmpfs',
      '/proc/1',
      '--remount-ro',
      '/proc/1',
    ]);
    expect(valuesOf(args, '--hostname')).toEqual([[sandboxHostname]]);
  });

  it('sets exactly the planned environment, the fds and the command', () => {
    expect(valuesOf(args, '--setenv', 2)).toEqual([['GHOST_MODE', 'host']]);
    expect(valuesOf(args, '--seccomp')).toEqual([['4']]);
    expect(valuesOf(args, '--info-fd')).toEqual([['6']]);
    expect(args.slice(args.indexOf('--'))).toEqual(['--', '/usr/bin/node', 'host.js', '--flag']);
  });

  it("shares the machine's network only when asked", () => {
    const shared = bwrapArguments(
      { ...plan, network: 'shared' },
      { paths, sharedLibraries: [], identity: parentIdentity, emptyFileFd: 3, infoFd: 4 },
    );
    expect(shared).not.toContain('--unshare-net');
    expect(shared).not.toContain('--seccomp');
  });
});

describe('bwrapArguments with links to recreate', () => {
  // An application whose node_modules/@scope/engine links to a store outside it, and a workspace
  // given through a link.
  const linkedPlan: SandboxSpawnPlan = {
    ...plan,
    runtimePaths: ['/opt/app/node_modules/@scope/engine'],
    workspace: '/var/tmp-link/ghost-program-1',
    cwd: '/var/tmp-link/ghost-program-1',
  };
  const args = bwrapArguments(linkedPlan, {
    paths: {
      readPaths: ['/store/engine'],
      workspace: '/tmp/ghost-program-1',
      cwd: '/tmp/ghost-program-1',
      links: [
        { path: '/opt/app/node_modules/@scope/engine', target: '/store/engine' },
        { path: '/var/tmp-link', target: '/tmp' },
      ],
    },
    sharedLibraries: [],
    identity: droppedIdentity,
    emptyFileFd: 3,
    infoFd: 4,
  });

  it('binds the real paths, not the ones given through links, and starts in the real working directory', () => {
    expect(valuesOf(args, '--ro-bind', 2)).toContainEqual(['/store/engine', '/store/engine']);
    expect(valuesOf(args, '--bind', 2)).toEqual([['/tmp/ghost-program-1', '/tmp/ghost-program-1']]);
    expect(args.join(' ')).not.toContain('--ro-bind /opt/app');
    expect(valuesOf(args, '--chdir')).toEqual([['/tmp/ghost-program-1']]);
  });

  it('recreates each link after the binds, its parents made searchable by anyone first', () => {
    expect(valuesOf(args, '--symlink', 2)).toEqual([
      ['/store/engine', '/opt/app/node_modules/@scope/engine'],
      ['/tmp', '/var/tmp-link'],
    ]);
    const lastBind = args.lastIndexOf('--bind');
    expect(args.indexOf('--symlink')).toBeGreaterThan(lastBind);
    const directories = valuesOf(args, '--dir').map(([path]) => path);
    for (const parent of [
      '/opt',
      '/opt/app',
      '/opt/app/node_modules',
      '/opt/app/node_modules/@scope',
      '/var',
    ]) {
      expect(directories).toContain(parent);
      expect(args[args.indexOf(parent) - 2]).toBe('0755');
    }
    // The links themselves are not directories.
    expect(directories).not.toContain('/opt/app/node_modules/@scope/engine');
    expect(directories).not.toContain('/var/tmp-link');
  });
});

describe('bwrapArguments with a root parent', () => {
  const layout = {
    paths,
    sharedLibraries: ['/lib64/ld-linux-x86-64.so.2'],
    identity: droppedIdentity,
    seccompFd: 4,
    emptyFileFd: 5,
    infoFd: 6,
  };
  const args = bwrapArguments(plan, { ...layout, programIds: { uid: 2_113_934_567, gid: 2_113_934_567 } });

  it('makes no user namespace, so bubblewrap mounts as root, and keeps only what setpriv needs', () => {
    expect(args).not.toContain('--unshare-user');
    expect(args).not.toContain('--disable-userns');
    for (const flag of [
      '--unshare-pid',
      '--unshare-ipc',
      '--unshare-uts',
      '--unshare-cgroup',
      '--unshare-net',
    ]) {
      expect(args).toContain(flag);
    }
    expect(valuesOf(args, '--cap-drop')).toEqual([['ALL']]);
    expect(valuesOf(args, '--cap-add')).toEqual([
      ['CAP_SETUID'],
      ['CAP_SETGID'],
      ['CAP_SETPCAP'],
      ['CAP_DAC_READ_SEARCH'],
    ]);
  });

  it('binds setpriv and its libraries read-only and runs the command through it as the identity', () => {
    expect(valuesOf(args, '--ro-bind', 2)).toEqual(
      expect.arrayContaining([
        ['/usr/bin/setpriv', '/usr/bin/setpriv'],
        ['/lib/libcap-ng.so.0', '/lib/libcap-ng.so.0'],
      ]),
    );
    expect(args.slice(args.indexOf('--'))).toEqual([
      '--',
      '/usr/bin/setpriv',
      '--reuid=2113934567',
      '--regid=2113934567',
      '--clear-groups',
      '--inh-caps=-all',
      '--bounding-set=-all',
      '--',
      '/usr/bin/node',
      'host.js',
      '--flag',
    ]);
  });

  it('without the program ids, leaves for the launcher a place setpriv refuses, found from the end', () => {
    const unset = bwrapArguments(plan, layout);
    const positions = programIdPositions(unset, plan);
    expect(positions).toBeDefined();
    expect([unset[positions!.uid], unset[positions!.gid]]).toEqual(['--reuid=unset', '--regid=unset']);
    // A program argument that reads the same is not taken for it.
    const tricky = { ...plan, args: ['--reuid=unset', '--regid=unset'] };
    const trickyArgs = bwrapArguments(tricky, layout);
    expect(programIdPositions(trickyArgs, tricky)?.uid).toBe(trickyArgs.lastIndexOf('/usr/bin/setpriv') + 1);
    expect(
      programIdPositions(bwrapArguments(plan, { ...layout, identity: parentIdentity }), plan),
    ).toBeUndefined();
  });
});
