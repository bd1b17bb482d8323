import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from './errors.js';
import { PluginVersionError } from './plugin-errors.js';
import { Registry } from './registry.js';
import {
  type BoundedOutput,
  defineSandboxBackend,
  type SandboxBackendV1,
  type SandboxCapabilities,
  type SandboxProcess,
  type SandboxSpawnSpec,
} from './sandbox.js';

const capabilities: SandboxCapabilities = {
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
};

const emptyOutput: BoundedOutput = { text: '', bytesSeen: 0, isTruncated: false };

/** A backend that "runs" nothing: enough to exercise the contract without processes. */
function fakeBackend() {
  const spawned: SandboxSpawnSpec[] = [];
  const backend = defineSandboxBackend({
    kind: 'sandbox',
    specificationVersion: 'sandbox-v1',
    name: 'fake',
    platforms: ['linux', 'darwin'],
    async detect() {
      return { available: true, capabilities };
    },
    async spawn(spec): Promise<SandboxProcess> {
      spawned.push(spec);
      const channel = new PassThrough();
      let exit: (code: number | null, signal: NodeJS.Signals | null) => void = () => {};
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
        exit = (code, signal) => resolve({ code, signal });
      });
      return {
        pid: 4242,
        channel,
        channels: [channel],
        stdout: emptyOutput,
        stderr: emptyOutput,
        exited,
        kill: (signal = 'SIGKILL') => exit(null, signal),
        async close() {
          exit(null, 'SIGKILL');
          channel.destroy();
        },
      };
    },
  });
  return { backend, spawned };
}

function throwsFrom(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
}

describe('defineSandboxBackend', () => {
  it('returns the backend itself, usable through a registry', async () => {
    const { backend, spawned } = fakeBackend();
    const registry = new Registry();
    registry.register(backend);

    const found = await registry.sandbox('fake');
    const detection = await found.detect();
    const child = await found.spawn({
      command: '/usr/bin/node',
      args: ['host.js'],
      env: {},
      runtimePaths: ['/usr/bin/node'],
      workspace: '/tmp/ghost-run-x',
    });
    child.kill('SIGTERM');

    expect(found).toBe(backend);
    expect(detection.available).toBe(true);
    expect(spawned[0]?.args).toEqual(['host.js']);
    expect(await child.exited).toEqual({ code: null, signal: 'SIGTERM' });
  });

  it('rejects a backend without spawn() or detect()', () => {
    const { backend } = fakeBackend();
    const { spawn: _spawn, ...withoutSpawn } = backend;
    const { detect: _detect, ...withoutDetect } = backend;

    const noSpawn = throwsFrom(() => defineSandboxBackend(withoutSpawn as unknown as SandboxBackendV1));
    const noDetect = throwsFrom(() => defineSandboxBackend(withoutDetect as unknown as SandboxBackendV1));

    expect(ConfigurationError.isInstance(noSpawn)).toBe(true);
    expect(noSpawn).toMatchObject({ code: 'PLUGIN_INVALID' });
    expect(noSpawn.message).toContain("Sandbox backend 'fake' has no spawn() method");
    expect(noDetect.message).toContain('has no detect() method');
  });

  it('rejects a backend without a name, of another kind or without platforms', () => {
    const { backend } = fakeBackend();
    const cases = [
      { ...backend, name: '' },
      { ...backend, kind: 'engine' },
      { ...backend, platforms: 'linux' },
    ];
    for (const candidate of cases) {
      const error = throwsFrom(() => defineSandboxBackend(candidate as unknown as SandboxBackendV1));
      expect(error).toMatchObject({ code: 'PLUGIN_INVALID' });
    }
  });

  it('rejects another specification version', () => {
    const { backend } = fakeBackend();

    const error = throwsFrom(() =>
      defineSandboxBackend({ ...backend, specificationVersion: 'sandbox-v2' } as unknown as SandboxBackendV1),
    );

    expect(PluginVersionError.isInstance(error)).toBe(true);
    expect(error.message).toContain("implements specification 'sandbox-v2'");
  });
});
