import { describe, expect, it } from 'vitest';
import { ConfigurationError, SandboxUnavailableError } from '../errors.js';
import { noSandboxCapabilities, type SandboxCapabilities, type SandboxSpawnSpec } from '../sandbox.js';
import { planSandboxSpawn } from './sandbox-spawn-plan.js';

const nothing: SandboxCapabilities = { ...noSandboxCapabilities, environmentIsolation: true };

/** A backend like a plain child process: it enforces nothing but the environment and the wall clock. */
const plainProcess = { name: 'plain', capabilities: nothing };

/** A backend that enforces everything. */
const jail = {
  name: 'jail',
  capabilities: Object.fromEntries(
    Object.keys(nothing).map((key) => [key, true]),
  ) as unknown as SandboxCapabilities,
};

describe('planSandboxSpawn', () => {
  const workspace = '/tmp/ghost-workspace';
  const spec = (overrides: Record<string, unknown> = {}) =>
    ({
      command: '/usr/bin/node',
      args: ['-e', ''],
      env: { PATH: '/usr/bin' },
      runtimePaths: ['/usr/lib/node'],
      workspace,
      network: 'shared',
      ...overrides,
    }) as SandboxSpawnSpec;

  it('applies the defaults', () => {
    const plan = planSandboxSpawn(spec({ network: undefined }), jail);
    expect(plan).toEqual({
      command: '/usr/bin/node',
      args: ['-e', ''],
      env: { PATH: '/usr/bin' },
      runtimePaths: ['/usr/lib/node'],
      workspace,
      cwd: workspace,
      network: 'none',
      subprocesses: 'allow',
      extraFds: 1,
      limits: {},
      signal: undefined,
    });
  });

  it('copies the environment without a prototype, so inherited keys cannot reach the child', () => {
    const inherited = Object.create({ GHOST_INHERITED: 'leak' }) as Record<string, string>;
    inherited.OWN = 'kept';
    const plan = planSandboxSpawn(spec({ env: inherited }), plainProcess);
    expect(Object.getPrototypeOf(plan.env)).toBeNull();
    const names: string[] = [];
    for (const name in plan.env) names.push(name);
    expect(names).toEqual(['OWN']);
  });

  it('accepts wallSeconds, a cwd inside a runtime path and more channels', () => {
    const plan = planSandboxSpawn(
      spec({ limits: { wallSeconds: 2 }, cwd: '/usr/lib/node/bin', extraFds: 3 }),
      plainProcess,
    );
    expect(plan).toMatchObject({ limits: { wallSeconds: 2 }, cwd: '/usr/lib/node/bin', extraFds: 3 });
  });

  it('accepts every limit, subprocess denial and no network from a backend that enforces them', () => {
    const limits = {
      memoryBytes: 1,
      cpuSeconds: 2,
      fileBytes: 3,
      openFiles: 4,
      processes: 5,
      wallSeconds: 6,
    };
    const plan = planSandboxSpawn(spec({ limits, subprocesses: 'deny', network: 'none' }), jail);
    expect(plan).toMatchObject({ limits, subprocesses: 'deny', network: 'none' });
  });

  it.each([
    ['network omitted', { network: undefined }, /cannot isolate the network; pass network: 'shared'/],
    ['network none', { network: 'none' }, /cannot isolate the network; pass network: 'shared'/],
    ['memoryBytes', { limits: { memoryBytes: 1_000_000 } }, /cannot enforce memoryBytes/],
    ['cpuSeconds', { limits: { cpuSeconds: 1 } }, /cannot enforce cpuSeconds/],
    ['fileBytes', { limits: { fileBytes: 1 } }, /cannot enforce fileBytes/],
    ['openFiles', { limits: { openFiles: 1 } }, /cannot enforce openFiles/],
    ['processes', { limits: { processes: 1, wallSeconds: 1 } }, /cannot enforce processes/],
    ['subprocess denial', { subprocesses: 'deny' }, /cannot deny subprocesses/],
  ])('rejects what it cannot enforce (%s) with a SandboxUnavailableError', (_name, overrides, message) => {
    expect(() => planSandboxSpawn(spec(overrides), plainProcess)).toThrow(SandboxUnavailableError);
    expect(() => planSandboxSpawn(spec(overrides), plainProcess)).toThrow(message);
  });

  it('names every unenforceable limit at once', () => {
    expect(() => planSandboxSpawn(spec({ limits: { memoryBytes: 1, cpuSeconds: 1 } }), plainProcess)).toThrow(
      'cannot enforce memoryBytes, cpuSeconds',
    );
  });

  it.each([
    ['a relative command', { command: 'node' }, /command must be an absolute path/],
    ['a missing command', { command: undefined }, /command must be a string/],
    ['args that are not an array', { args: '-e' }, /args must be an array/],
    ['an argument that is not a string', { args: ['-e', 1] }, /args\[1\] must be a string/],
    ['an argument with a NUL byte', { args: ['a\0b'] }, /args\[0\] contains a NUL byte/],
    ['env that is not an object', { env: null }, /env must be an object/],
    ['an env value that is not a string', { env: { PORT: 8080 } }, /env\.PORT must be a string/],
    ['an env name with =', { env: { 'A=B': 'c' } }, /name "A=B" is invalid/],
    ['runtimePaths that are not an array', { runtimePaths: '/usr' }, /runtimePaths must be an array/],
    ['a relative runtime path', { runtimePaths: ['lib'] }, /runtimePaths\[0\] must be an absolute path/],
    ['a relative workspace', { workspace: 'work' }, /workspace must be an absolute path/],
    ['a cwd outside the workspace', { cwd: '/etc' }, /cwd \/etc is neither inside the workspace/],
    ['a cwd next to the workspace', { cwd: `${workspace}-other` }, /is neither inside the workspace/],
    ['zero extra fds', { extraFds: 0 }, /extraFds must be an integer from 1/],
    ['fractional extra fds', { extraFds: 1.5 }, /extraFds must be an integer from 1/],
    ['a signal that is not an AbortSignal', { signal: {} }, /signal must be an AbortSignal/],
    ['an unknown network', { network: 'lan' }, /network must be 'none' or 'shared'/],
    ["the old network 'host'", { network: 'host' }, /is now called 'shared'; pass network: 'shared'/],
    ['an unknown subprocess policy', { subprocesses: 'some' }, /subprocesses must be 'allow' or 'deny'/],
    ['an unknown limit', { limits: { wallSecs: 1 } }, /Unknown sandbox limit "wallSecs"/],
    ['a negative wallSeconds', { limits: { wallSeconds: -1 } }, /wallSeconds must be a positive number/],
    ['a wallSeconds a timer cannot wait', { limits: { wallSeconds: 3e6 } }, /wallSeconds must be at most/],
    ['limits that are not an object', { limits: 5 }, /limits must be an object/],
  ])('rejects %s with a ConfigurationError', (_name, overrides, message) => {
    expect(() => planSandboxSpawn(spec(overrides), plainProcess)).toThrow(ConfigurationError);
    expect(() => planSandboxSpawn(spec(overrides), plainProcess)).toThrow(message);
  });

  it('rejects a spec that is not an object', () => {
    expect(() => planSandboxSpawn(null as unknown as SandboxSpawnSpec, plainProcess)).toThrow(
      ConfigurationError,
    );
  });
});
