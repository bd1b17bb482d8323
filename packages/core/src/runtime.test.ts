import { mkdtemp, readdir, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CleanupError, ConfigurationError } from './errors.js';
import type { EnginePlugin, ModelProviderV1 } from './plugin.js';
import { PluginVersionError } from './plugin-errors.js';
import { configure, createRuntime, defaultRuntime, type RuntimeOptions } from './runtime.js';
import { noSandboxCapabilities, type SandboxBackendV1 } from './sandbox.js';

const engine: EnginePlugin = { kind: 'engine', specificationVersion: 'engine-v1', name: 'tiny' };

const sandbox: SandboxBackendV1 = {
  kind: 'sandbox',
  specificationVersion: 'sandbox-v1',
  name: 'jail',
  platforms: ['linux'],
  detect: async () => ({
    available: false,
    reason: 'a test backend',
    capabilities: noSandboxCapabilities,
  }),
  spawn: async () => {
    throw new Error('test backends spawn nothing');
  },
};

const provider: ModelProviderV1 = {
  kind: 'model',
  specificationVersion: 'model-v1',
  name: 'echo',
  languageModel: (modelId) => ({
    specificationVersion: 'model-v1',
    provider: 'echo',
    modelId,
    async *stream() {
      yield { type: 'finish', reason: 'stop' };
    },
  }),
};

function throwsFrom(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
}

describe('createRuntime', () => {
  it('registers the given plugins in its own registry', async () => {
    const runtime = createRuntime({ engines: [engine], sandboxes: [sandbox], models: [provider] });

    expect(await runtime.registry.engine('tiny')).toBe(engine);
    expect(await runtime.registry.sandbox('jail')).toBe(sandbox);
    expect((await runtime.registry.model('echo:small')).modelId).toBe('small');
  });

  it('gives each runtime its own registry', async () => {
    const first = createRuntime({ engines: [engine] });
    const second = createRuntime();

    expect(await first.registry.engine('tiny')).toBe(engine);
    await expect(second.registry.engine('tiny')).rejects.toMatchObject({ code: 'PLUGIN_NOT_FOUND' });
  });

  it('rejects an unknown option, naming it and the known ones', () => {
    const error = throwsFrom(() => createRuntime({ engine: [engine] } as unknown as RuntimeOptions));

    expect(ConfigurationError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'RUNTIME_OPTION_UNKNOWN' });
    expect(error.message).toContain("no option 'engine'");
    expect(error.message).toContain(
      'engines, sandboxes, models, sessionStore, codeMode, telemetry, workspaceRoot, importModule',
    );
  });

  it('says where a plugin listed under the wrong option belongs', () => {
    const error = throwsFrom(() => createRuntime({ engines: [sandbox] } as unknown as RuntimeOptions));

    expect(error).toMatchObject({ code: 'RUNTIME_OPTION_INVALID' });
    expect(error.message).toContain("sandbox plugin 'jail': list it under sandboxes");
  });

  it('rejects option values of the wrong type', () => {
    const invalid: unknown[] = [
      { engines: engine },
      { codeMode: 'fast' },
      { codeMode: [] },
      { workspaceRoot: '' },
      { importModule: '@ghost/engine-quickjs' },
    ];
    for (const options of invalid) {
      const error = throwsFrom(() => createRuntime(options as RuntimeOptions));
      expect(error, JSON.stringify(options)).toMatchObject({ code: 'RUNTIME_OPTION_INVALID' });
    }
  });

  it('checks plugins as the registry does', () => {
    const future = { ...engine, specificationVersion: 'engine-v2' } as unknown as EnginePlugin;

    expect(() => createRuntime({ engines: [future] })).toThrow(PluginVersionError);
    expect(() => createRuntime({ engines: [engine, engine] })).toThrow(/already registered/);
  });

  it('keeps a frozen copy of the code mode settings', () => {
    const settings = { engine: 'quickjs', limits: { cpuSeconds: 2 } };

    const runtime = createRuntime({ codeMode: settings });
    settings.engine = 'v8';

    expect(runtime.codeMode).toEqual({ engine: 'quickjs', limits: { cpuSeconds: 2 } });
    expect(Object.isFrozen(runtime.codeMode)).toBe(true);
    expect(createRuntime().codeMode).toEqual({});
  });

  it('imports built-in plugins through the given importModule', async () => {
    const quickjs: EnginePlugin = { kind: 'engine', specificationVersion: 'engine-v1', name: 'quickjs' };
    const imported: string[] = [];
    const runtime = createRuntime({
      importModule: async (specifier) => {
        imported.push(specifier);
        return { default: quickjs };
      },
    });

    expect(await runtime.registry.engine('quickjs')).toBe(quickjs);
    expect(imported).toEqual(['@ghost/engine-quickjs']);
  });

  it('creates workspaces under workspaceRoot, defaulting to the temporary directory', async () => {
    const root = await realpath(await mkdtemp(join(tmpdir(), 'ghost-runtime-test-')));
    try {
      const runtime = createRuntime({ workspaceRoot: root });
      const workspace = runtime.createWorkspace();
      const directory = await workspace.path();

      expect(runtime.workspaceRoot).toBe(root);
      expect(dirname(directory)).toBe(root);
      await workspace.close();
      expect(await readdir(root)).toEqual([]);
      expect(createRuntime().workspaceRoot).toBe(tmpdir());
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('runtime resources', () => {
  const key = Symbol('test resource');

  it('makes a resource once, closes resources newest first, and closes once', async () => {
    const runtime = createRuntime();
    const closed: string[] = [];
    const first = runtime.resource(key, () => ({ close: async () => void closed.push('first') }));
    expect(runtime.resource(key, () => ({ close: async () => void closed.push('again') }))).toBe(first);
    runtime.resource(Symbol('second'), () => ({ close: async () => void closed.push('second') }));
    await Promise.all([runtime.close(), runtime.close()]);
    expect(closed).toEqual(['second', 'first']);
  });

  it('refuses new resources once closed, with a code to tell it by', async () => {
    const runtime = createRuntime();
    await runtime.close();
    expect(() => runtime.resource(key, () => ({ close: async () => {} }))).toThrow(
      expect.objectContaining({ code: 'RUNTIME_CLOSED' }),
    );
  });

  it('closes every resource even when one fails, then reports the failure as a CleanupError', async () => {
    const runtime = createRuntime();
    let isOtherClosed = false;
    runtime.resource(Symbol('other'), () => ({
      close: async () => {
        isOtherClosed = true;
      },
    }));
    runtime.resource(key, () => ({
      close: async () => {
        throw new Error('a process would not end');
      },
    }));
    const failure = await runtime.close().catch((error: unknown) => error);
    expect(CleanupError.isInstance(failure)).toBe(true);
    expect((failure as Error).message).toContain('a process would not end');
    expect(isOtherClosed).toBe(true);
  });
});

describe('configure and defaultRuntime', () => {
  it('makes a default runtime on first use and keeps it', () => {
    const runtime = defaultRuntime();

    expect(defaultRuntime()).toBe(runtime);
    expect(runtime.codeMode).toEqual({});
  });

  it('replaces the default runtime', async () => {
    const before = defaultRuntime();

    const configured = configure({ engines: [engine], codeMode: { sandbox: 'native' } });

    expect(configured).not.toBe(before);
    expect(defaultRuntime()).toBe(configured);
    expect(await defaultRuntime().registry.engine('tiny')).toBe(engine);
    expect(defaultRuntime().codeMode).toEqual({ sandbox: 'native' });
  });

  it('leaves the default alone when the options are invalid', () => {
    const current = defaultRuntime();

    expect(() => configure({ sandbox: 'native' } as unknown as RuntimeOptions)).toThrow(ConfigurationError);
    expect(defaultRuntime()).toBe(current);
  });
});

describe('detecting the sandbox ahead', () => {
  function countingBackend(
    name: string,
    detect: () => Promise<never> | ReturnType<SandboxBackendV1['detect']>,
  ) {
    let detections = 0;
    const backend: SandboxBackendV1 = {
      ...sandbox,
      name,
      detect: () => {
        detections += 1;
        return detect();
      },
    };
    return { backend, detections: () => detections };
  }
  const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

  it("starts code mode's sandbox detection when the runtime is created, so the first session need not wait", async () => {
    const counted = countingBackend('counted', sandbox.detect);
    createRuntime({ sandboxes: [counted.backend], codeMode: { sandbox: 'counted' } });
    await settle();
    expect(counted.detections()).toBe(1);
  });

  it("detects nothing for a runtime without code mode settings, or with sandbox 'unrestricted'", async () => {
    const counted = countingBackend('counted', sandbox.detect);
    createRuntime({ sandboxes: [counted.backend] });
    createRuntime({ sandboxes: [counted.backend], codeMode: { sandbox: 'unrestricted' } });
    await settle();
    expect(counted.detections()).toBe(0);
  });

  it('leaves a failing detection, or a sandbox that is not installed, to the session that needs it', async () => {
    const failing = countingBackend('failing', () => Promise.reject(new Error('probe crashed')));
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      createRuntime({ sandboxes: [failing.backend], codeMode: { sandbox: 'failing' } });
      createRuntime({ codeMode: { sandbox: 'not-a-backend' } });
      await settle();
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    expect(failing.detections()).toBe(1);
    expect(unhandled).toEqual([]);
  });
});
