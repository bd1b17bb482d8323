import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

const run = promisify(execFile);

import { defineModelProvider } from './define-model-provider.js';
import { ConfigurationError, SandboxUnavailableError } from './errors.js';
import type { ModelV1 } from './model.js';
import { type EnginePlugin, kindOption, type ModelProviderV1 } from './plugin.js';
import {
  PluginAlreadyRegisteredError,
  PluginInvalidError,
  PluginLoadError,
  PluginNotFoundError,
  PluginNotInstalledError,
  PluginVersionError,
} from './plugin-errors.js';
import { Registry } from './registry.js';
import { createRuntime, type RuntimeOptions } from './runtime.js';
import { noSandboxCapabilities, type SandboxBackendV1 } from './sandbox.js';

function testEngine(name: string): EnginePlugin {
  return { kind: 'engine', specificationVersion: 'engine-v1', name };
}

function testSandbox(name: string): SandboxBackendV1 {
  return {
    kind: 'sandbox',
    specificationVersion: 'sandbox-v1',
    name,
    platforms: ['linux', 'darwin'],
    detect: async () => ({ available: false, reason: 'a test backend', capabilities: noSandboxCapabilities }),
    spawn: async () => {
      throw new Error('test backends spawn nothing');
    },
  };
}

function echoModel(modelId: string): ModelV1 {
  return {
    specificationVersion: 'model-v1',
    provider: 'echo',
    modelId,
    async *stream() {
      yield { type: 'finish', reason: 'stop' };
    },
  };
}

function testProvider(name: string): ModelProviderV1 {
  return { kind: 'model', specificationVersion: 'model-v1', name, languageModel: echoModel };
}

function moduleNotFound(specifier: string): Error {
  return Object.assign(new Error(`Cannot find package '${specifier}' imported from /app/main.js`), {
    code: 'ERR_MODULE_NOT_FOUND',
  });
}

/** An importModule that serves the given module namespaces, slowly enough for calls to overlap. */
function fakeImporter(modules: Record<string, unknown>) {
  const calls: string[] = [];
  async function importModule(specifier: string): Promise<unknown> {
    calls.push(specifier);
    await new Promise((resolve) => setTimeout(resolve, 5));
    if (!Object.hasOwn(modules, specifier)) throw moduleNotFound(specifier);
    return modules[specifier];
  }
  return { importModule, calls };
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the promise to reject');
}

const realPlatform = process.platform;

function pretendPlatform(platform: NodeJS.Platform): void {
  Object.defineProperty(process, 'platform', { value: platform, configurable: true });
}

afterEach(() => {
  Object.defineProperty(process, 'platform', { value: realPlatform, configurable: true });
});

describe('Registry.register', () => {
  it('finds registered plugins of every kind by name', async () => {
    const registry = new Registry();
    const engine = testEngine('tiny');
    const sandbox = testSandbox('jail');
    const provider = testProvider('echo');
    registry.register(engine);
    registry.register(sandbox);
    registry.register(provider);

    expect(await registry.engine('tiny')).toBe(engine);
    expect(await registry.sandbox('jail')).toBe(sandbox);
    expect(await registry.modelProvider('echo')).toBe(provider);
  });

  it('prefers a registered plugin over the built-in package of the same name', async () => {
    const { importModule, calls } = fakeImporter({});
    const registry = new Registry({ importModule });
    const ownQuickjs = testEngine('quickjs');
    registry.register(ownQuickjs);

    expect(await registry.engine('quickjs')).toBe(ownQuickjs);
    expect(calls).toEqual([]);
  });

  it('rejects a newer specification version, naming the plugin, both versions and telling to upgrade core', () => {
    const registry = new Registry();
    const future = { ...testEngine('tiny'), specificationVersion: 'engine-v2' } as unknown as EnginePlugin;

    const error = (() => {
      try {
        registry.register(future);
      } catch (caught) {
        return caught as Error;
      }
      throw new Error('expected register to throw');
    })();
    expect(PluginVersionError.isInstance(error)).toBe(true);
    expect(ConfigurationError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'PLUGIN_VERSION_UNSUPPORTED' });
    expect(error.message).toContain("Engine 'tiny'");
    expect(error.message).toContain("'engine-v2'");
    expect(error.message).toContain("supports 'engine-v1'");
    expect(error.message).toContain('Upgrade @ghost/core');
  });

  it('rejects an older specification version, telling to upgrade the plugin', () => {
    const registry = new Registry();
    const old = { ...testSandbox('jail'), specificationVersion: 'sandbox-v0' } as unknown as SandboxBackendV1;

    expect(() => registry.register(old)).toThrow(
      /Sandbox backend 'jail'.*'sandbox-v0'.*'sandbox-v1'.*Upgrade the plugin/,
    );
  });

  it('refuses any specificationVersion but the exact one, naming the version it expects', () => {
    const registry = new Registry();
    const unknown = { ...testEngine('odd'), specificationVersion: 'engine-next' } as unknown as EnginePlugin;

    const error = (() => {
      try {
        registry.register(unknown);
      } catch (caught) {
        return caught as Error;
      }
      throw new Error('expected register to throw');
    })();
    expect(PluginVersionError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'PLUGIN_VERSION_UNSUPPORTED' });
    expect(error.message).toContain("'engine-next'");
    expect(error.message).toContain("'engine-v1'");
    // Nothing adapts an older contract: the registry takes no adapters.
    expect(() => createRuntime({ contractAdapters: [] } as unknown as RuntimeOptions)).toThrow(
      /no option 'contractAdapters'/,
    );
  });

  it('rejects a second plugin with the same name and kind', () => {
    const registry = new Registry();
    registry.register(testEngine('tiny'));

    let error: unknown;
    try {
      registry.register(testEngine('tiny'));
    } catch (caught) {
      error = caught;
    }
    expect(PluginAlreadyRegisteredError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'PLUGIN_ALREADY_REGISTERED' });
    expect((error as Error).message).toContain("Engine 'tiny' is already registered");
  });

  it('keeps names separate per kind', async () => {
    const registry = new Registry();
    const engine = testEngine('shared');
    const sandbox = testSandbox('shared');
    registry.register(engine);
    registry.register(sandbox);

    expect(await registry.engine('shared')).toBe(engine);
    expect(await registry.sandbox('shared')).toBe(sandbox);
  });

  it('rejects malformed plugins with PLUGIN_INVALID', () => {
    const registry = new Registry();
    const { detect: _detect, ...withoutDetect } = testSandbox('jail');
    const malformed: unknown[] = [
      null,
      'quickjs',
      { kind: 'tool', name: 'x', specificationVersion: 'tool-v1' },
      { kind: 'engine', specificationVersion: 'engine-v1' },
      { kind: 'engine', specificationVersion: 'engine-v1', name: 'has space' },
      { kind: 'model', specificationVersion: 'model-v1', name: 'echo' },
      withoutDetect,
      { ...testSandbox('jail'), platforms: undefined },
    ];
    for (const plugin of malformed) {
      expect(() => registry.register(plugin as EnginePlugin), JSON.stringify(plugin)).toThrow(
        expect.objectContaining({ code: 'PLUGIN_INVALID' }),
      );
    }
  });

  it("reserves the sandbox name 'native' for the platform's own backend", () => {
    const registry = new Registry();

    expect(() => registry.register(testSandbox('native'))).toThrow(/'native' is reserved/);
  });
});

describe('Registry.model', () => {
  it('splits the reference at the first colon and asks the provider for the model', async () => {
    const registry = new Registry();
    registry.register(testProvider('echo'));

    const model = await registry.model('echo:llama3:8b');

    expect(model.modelId).toBe('llama3:8b');
  });

  it('rejects a reference without provider or model id', async () => {
    const registry = new Registry();
    registry.register(testProvider('echo'));

    for (const reference of ['gpt-5', ':gpt-5', 'echo:']) {
      const error = await rejection(registry.model(reference));
      expect(error, reference).toMatchObject({ code: 'MODEL_REFERENCE_INVALID' });
      expect(error.message).toContain("'openai:gpt-5'");
    }
  });

  it('rejects a model of another specification version', async () => {
    const registry = new Registry();
    const provider: ModelProviderV1 = {
      ...testProvider('echo'),
      languageModel: (modelId) =>
        ({ ...echoModel(modelId), specificationVersion: 'model-v2' }) as unknown as ModelV1,
    };
    registry.register(provider);

    const error = await rejection(registry.model('echo:big'));

    expect(PluginVersionError.isInstance(error)).toBe(true);
    expect(error.message).toContain("'model-v2'");
  });
});

describe('built-in plugins, imported lazily', () => {
  it('imports the package on first use and registers its default export', async () => {
    const quickjs = testEngine('quickjs');
    const { importModule, calls } = fakeImporter({ '@ghost/engine-quickjs': { default: quickjs } });
    const registry = new Registry({ importModule });

    expect(calls).toEqual([]);
    expect(await registry.engine('quickjs')).toBe(quickjs);
    expect(await registry.engine('quickjs')).toBe(quickjs);
    expect(calls).toEqual(['@ghost/engine-quickjs']);
    expect(() => registry.register(testEngine('quickjs'))).toThrow(PluginAlreadyRegisteredError);
  });

  it("finds the Python engine by the name 'python' in @ghost/engine-python", async () => {
    const python = testEngine('python');
    const { importModule, calls } = fakeImporter({ '@ghost/engine-python': { default: python } });
    const registry = new Registry({ importModule });

    expect(await registry.engine('python')).toBe(python);
    expect(calls).toEqual(['@ghost/engine-python']);
  });

  it('calls a default export that is a factory, once', async () => {
    let made = 0;
    const factory = () => {
      made += 1;
      return testProvider('openai');
    };
    const { importModule } = fakeImporter({ '@ghost/provider-openai': { default: factory } });
    const registry = new Registry({ importModule });

    const model = await registry.model('openai:gpt-5');
    await registry.model('openai:gpt-5-mini');

    expect(model.modelId).toBe('gpt-5');
    expect(made).toBe(1);
  });

  it('imports once when first uses run concurrently', async () => {
    const v8 = testEngine('v8');
    const { importModule, calls } = fakeImporter({ '@ghost/engine-v8': { default: v8 } });
    const registry = new Registry({ importModule });

    const engines = await Promise.all([registry.engine('v8'), registry.engine('v8'), registry.engine('v8')]);

    expect(engines).toEqual([v8, v8, v8]);
    expect(calls).toEqual(['@ghost/engine-v8']);
  });

  it('tries again after a failed import', async () => {
    const modules: Record<string, unknown> = {};
    const { importModule, calls } = fakeImporter(modules);
    const registry = new Registry({ importModule });
    await expect(registry.engine('v8')).rejects.toThrow(PluginNotInstalledError);

    modules['@ghost/engine-v8'] = { default: testEngine('v8') };

    expect((await registry.engine('v8')).name).toBe('v8');
    expect(calls).toEqual(['@ghost/engine-v8', '@ghost/engine-v8']);
  });

  // Under vitest every workspace package resolves (its module runner serves them from source), so
  // an application without the package is a plain Node process in an empty directory, running
  // the built core as an installed copy would.
  const builtCore = fileURLToPath(new URL('../dist/plugin-kit/index.js', import.meta.url));
  const isBuilt = existsSync(builtCore);
  it.skipIf(!isBuilt)(
    `names the package to install when it is missing from the application${isBuilt ? '' : ' (skipped: run the build first, the case runs the built core)'}`,
    async () => {
      const application = await mkdtemp(join(tmpdir(), 'ghost-registry-empty-app-'));
      try {
        const script = `
          const { Registry } = await import(${JSON.stringify(pathToFileURL(builtCore).href)});
          try { await new Registry().modelProvider('anthropic'); console.log('{}'); }
          catch (error) { console.log(JSON.stringify({ name: error.name, code: error.code, message: error.message })); }`;
        // A clean environment: the test runner's NODE_OPTIONS would bring its own resolution.
        const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
          cwd: application,
          env: {},
        });
        const error = JSON.parse(stdout) as { name?: string; code?: string; message?: string };
        expect(error).toMatchObject({ name: 'PluginNotInstalledError', code: 'PLUGIN_NOT_INSTALLED' });
        expect(error.message).toContain('pnpm add @ghost/provider-anthropic');
        expect(error.message).toContain(await realpath(application));
      } finally {
        await rm(application, { recursive: true, force: true });
      }
    },
  );

  it("resolves a built-in package from the application's directory, which core itself cannot see", async () => {
    const application = await mkdtemp(join(tmpdir(), 'ghost-registry-app-'));
    const packageDirectory = join(application, 'node_modules', '@ghost', 'engine-v8');
    await mkdir(packageDirectory, { recursive: true });
    await writeFile(
      join(packageDirectory, 'package.json'),
      JSON.stringify({
        name: '@ghost/engine-v8',
        type: 'module',
        exports: { '.': { default: './index.js' } },
      }),
    );
    await writeFile(
      join(packageDirectory, 'index.js'),
      "export default () => ({ kind: 'engine', specificationVersion: 'engine-v1', name: 'v8', fromApplication: true });",
    );
    const previousDirectory = process.cwd();
    try {
      process.chdir(application);
      const engine = await new Registry().engine('v8');

      expect(engine).toMatchObject({ name: 'v8', fromApplication: true });
    } finally {
      process.chdir(previousDirectory);
      await rm(application, { recursive: true, force: true });
    }
  });

  it('reports a missing package through an injected import() too', async () => {
    const registry = new Registry({ importModule: (specifier) => import(/* @vite-ignore */ specifier) });

    const error = await rejection(registry.sandbox('seatbelt'));

    expect(error).toMatchObject({ code: 'PLUGIN_NOT_INSTALLED' });
    expect(error.message).toContain('pnpm add @ghost/sandbox-seatbelt');
  });

  it('tells a missing dependency of an installed package apart from a missing package', async () => {
    const registry = new Registry({
      importModule: async () => {
        throw moduleNotFound('quickjs-emscripten');
      },
    });

    const error = await rejection(registry.engine('quickjs'));

    expect(PluginLoadError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'PLUGIN_LOAD_FAILED' });
    expect(error.message).toContain('quickjs-emscripten');
  });

  it('rejects a package whose default export is missing, of another kind or named otherwise', async () => {
    const { importModule } = fakeImporter({
      '@ghost/engine-quickjs': { notDefault: testEngine('quickjs') },
      '@ghost/engine-v8': { default: testSandbox('v8') },
      '@ghost/sandbox-bwrap': { default: testSandbox('bubblewrap') },
    });
    const registry = new Registry({ importModule });

    const noDefault = await rejection(registry.engine('quickjs'));
    const wrongKind = await rejection(registry.engine('v8'));
    const wrongName = await rejection(registry.sandbox('bwrap'));

    expect(noDefault).toMatchObject({ code: 'PLUGIN_INVALID' });
    expect(noDefault.message).toContain('@ghost/engine-quickjs has no default export');
    expect(wrongKind).toMatchObject({ code: 'PLUGIN_INVALID' });
    expect(wrongKind.message).toContain('Expected an engine plugin (from @ghost/engine-v8)');
    expect(wrongName).toMatchObject({ code: 'PLUGIN_INVALID' });
    expect(wrongName.message).toContain("named 'bubblewrap'");
  });

  it('names the package in a version error of a lazily loaded plugin', async () => {
    const old = { ...testEngine('v8'), specificationVersion: 'engine-v0' };
    const { importModule } = fakeImporter({ '@ghost/engine-v8': { default: old } });
    const registry = new Registry({ importModule });

    const error = await rejection(registry.engine('v8'));

    expect(PluginVersionError.isInstance(error)).toBe(true);
    expect(error.message).toContain('Upgrade @ghost/engine-v8');
  });

  it('lists registered and built-in names for an unknown name', async () => {
    const registry = new Registry();
    registry.register(testEngine('tiny'));

    const error = await rejection(registry.engine('tinyy'));

    expect(PluginNotFoundError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'PLUGIN_NOT_FOUND' });
    expect(error.message).toContain("No engine is named 'tinyy'");
    expect(error.message).toContain("Registered: 'tiny'");
    expect(error.message).toContain("Built in: 'quickjs', 'v8'");
  });

  it("names createRuntime's own option in the message for an unknown sandbox", async () => {
    const registry = new Registry();
    registry.register(testSandbox('jail'));

    const error = await rejection(registry.sandbox('jial'));

    expect(error.message).toBe(
      "No sandbox backend is named 'jial'. Registered: 'jail'. Built in: 'bwrap', 'seatbelt', 'unrestricted', 'native'. Register it with createRuntime({ sandboxes: [...] }) or use one of these names.",
    );
  });

  it("names createRuntime's own option in the message for an unknown model provider", async () => {
    const registry = new Registry();

    const error = await rejection(registry.modelProvider('echo'));

    expect(error.message).toBe(
      "No model provider is named 'echo'. Registered: none. Built in: 'openai', 'openai-chat', 'openai-compatible', 'anthropic'. Register it with createRuntime({ models: [...] }) or use one of these names.",
    );
  });

  it('suggests, for each kind, an option createRuntime accepts', () => {
    for (const kind of ['engine', 'sandbox', 'model', 'session-store'] as const) {
      const option = kindOption(kind).split(':')[0] ?? '';
      expect(() => createRuntime({ [option]: undefined })).not.toThrow();
    }
  });

  it('does not mistake inherited object keys for built-in names', async () => {
    const registry = new Registry({ importModule: fakeImporter({}).importModule });

    await expect(registry.engine('constructor')).rejects.toThrow(PluginNotFoundError);
  });
});

describe("sandbox 'native'", () => {
  it('is bubblewrap on Linux', async () => {
    pretendPlatform('linux');
    const bwrap = testSandbox('bwrap');
    const { importModule, calls } = fakeImporter({ '@ghost/sandbox-bwrap': { default: bwrap } });
    const registry = new Registry({ importModule });

    expect(await registry.sandbox('native')).toBe(bwrap);
    expect(await registry.sandbox('bwrap')).toBe(bwrap);
    expect(calls).toEqual(['@ghost/sandbox-bwrap']);
  });

  it('is seatbelt on macOS', async () => {
    pretendPlatform('darwin');
    const seatbelt = testSandbox('seatbelt');
    const { importModule, calls } = fakeImporter({ '@ghost/sandbox-seatbelt': { default: seatbelt } });
    const registry = new Registry({ importModule });

    expect(await registry.sandbox('native')).toBe(seatbelt);
    expect(calls).toEqual(['@ghost/sandbox-seatbelt']);
  });

  it('uses a registered bwrap backend instead of importing one', async () => {
    pretendPlatform('linux');
    const { importModule, calls } = fakeImporter({});
    const registry = new Registry({ importModule });
    const ownBwrap = testSandbox('bwrap');
    registry.register(ownBwrap);

    expect(await registry.sandbox('native')).toBe(ownBwrap);
    expect(calls).toEqual([]);
  });

  it('fails closed elsewhere, pointing at an explicit unrestricted choice', async () => {
    pretendPlatform('win32');
    const { importModule, calls } = fakeImporter({
      '@ghost/sandbox-bwrap': { default: testSandbox('bwrap') },
      '@ghost/sandbox-seatbelt': { default: testSandbox('seatbelt') },
    });
    const registry = new Registry({ importModule });

    const error = await rejection(registry.sandbox('native'));

    expect(SandboxUnavailableError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'SANDBOX_UNAVAILABLE' });
    expect(error.message).toContain("'native' is not supported on win32");
    expect(error.message).toContain("'unrestricted'");
    expect(calls).toEqual([]);
  });

  it("loads 'unrestricted' only when it is named, from its own package", async () => {
    pretendPlatform('win32');
    const unrestricted = testSandbox('unrestricted');
    const { importModule, calls } = fakeImporter({
      '@ghost/sandbox-unrestricted': { default: unrestricted },
    });
    const registry = new Registry({ importModule });

    await expect(registry.sandbox('native')).rejects.toMatchObject({ code: 'SANDBOX_UNAVAILABLE' });
    expect(calls).toEqual([]);
    expect(await registry.sandbox('unrestricted')).toBe(unrestricted);
    expect(calls).toEqual(['@ghost/sandbox-unrestricted']);
  });
});

describe('defineModelProvider', () => {
  it('returns the provider frozen, with its own fields, kind and specificationVersion filled in', () => {
    const { kind: _kind, specificationVersion: _version, ...declared } = testProvider('echo');
    const provider = defineModelProvider(declared);
    expect(provider).toMatchObject({ ...declared, kind: 'model', specificationVersion: 'model-v1' });
    expect(Object.isFrozen(provider)).toBe(true);
    expect(Object.isFrozen(declared)).toBe(false);
  });

  it('throws at definition time for a malformed provider', () => {
    expect(() =>
      defineModelProvider({ ...testProvider('echo'), kind: 'sandbox' } as unknown as ModelProviderV1),
    ).toThrow(PluginInvalidError);
    expect(() =>
      defineModelProvider({
        kind: 'model',
        specificationVersion: 'model-v1',
        languageModel: () => {},
      } as unknown as ModelProviderV1),
    ).toThrow(/name/);
    expect(() =>
      defineModelProvider({
        kind: 'model',
        specificationVersion: 'model-v1',
        name: 'echo',
      } as ModelProviderV1),
    ).toThrow(/languageModel\(\)/);
  });
});
