import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { builtinContractAdapters, type ContractAdapter } from './contract-adapter.js';
import type { ModelV1 } from './model.js';
import type { ModelProviderV1, Plugin } from './plugin.js';
import { PluginInvalidError, PluginVersionError } from './plugin-errors.js';
import { Registry } from './registry.js';
import { createRuntime } from './runtime.js';
import { currentSpecificationVersions } from './specification-version.js';

function echoModel(modelId: string): ModelV1 {
  return {
    specificationVersion: 'model-v1',
    provider: 'legacy',
    modelId,
    async *stream() {
      yield { type: 'finish', reason: 'stop' };
    },
  };
}

/**
 * A provider written for an older model contract, 'model-v0': it made models with
 * `createModel(id)` and had no `languageModel`.
 */
function legacyProvider(name = 'legacy') {
  return { kind: 'model', specificationVersion: 'model-v0', name, createModel: echoModel } as const;
}

/** What a release that replaced 'model-v0' by 'model-v1' would ship. */
const modelV0ToV1: ContractAdapter = {
  kind: 'model',
  from: 'model-v0',
  to: 'model-v1',
  adapt: (old) => {
    const createModel = old.createModel as (modelId: string) => ModelV1;
    const { createModel: _replaced, ...rest } = old;
    return {
      ...rest,
      specificationVersion: 'model-v1',
      languageModel: (modelId: string) => createModel(modelId),
    };
  },
};

let directories: string[] = [];
afterEach(async () => {
  for (const directory of directories) await rm(directory, { recursive: true, force: true });
  directories = [];
});

describe('contract adapters', () => {
  it('ship none while every contract is at its first version', () => {
    expect(builtinContractAdapters).toEqual([]);
    expect(currentSpecificationVersions).toEqual({
      engine: 'engine-v1',
      sandbox: 'sandbox-v1',
      model: 'model-v1',
      'session-store': 'session-store-v1',
    });
  });

  it('let the registry accept a plugin of an older version, adapted to the current one', async () => {
    const registry = new Registry({ contractAdapters: [modelV0ToV1] });

    registry.register(legacyProvider() as unknown as Plugin);

    const provider = await registry.modelProvider('legacy');
    expect(provider.specificationVersion).toBe('model-v1');
    const model = await registry.model('legacy:small');
    expect(model.modelId).toBe('small');
    const parts = [];
    for await (const part of model.stream({ messages: [] } as never, {} as never)) parts.push(part);
    expect(parts).toEqual([{ type: 'finish', reason: 'stop' }]);
  });

  it('chain, so a plugin two versions old reaches the current one', async () => {
    const renamed: ContractAdapter = {
      kind: 'model',
      from: 'model-beta',
      to: 'model-v0',
      adapt: (old) => ({ ...old, specificationVersion: 'model-v0', createModel: old.makeModel }),
    };
    const registry = new Registry({ contractAdapters: [modelV0ToV1, renamed] });
    const beta = { kind: 'model', specificationVersion: 'model-beta', name: 'beta', makeModel: echoModel };

    registry.register(beta as unknown as Plugin);

    expect((await registry.model('beta:x')).modelId).toBe('x');
  });

  it('adapt a built-in plugin loaded from its package', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'ghost-adapter-'));
    directories.push(directory);
    const file = join(directory, 'legacy-openai.mjs');
    await writeFile(
      file,
      `export default { kind: 'model', specificationVersion: 'model-v0', name: 'openai', createModel: (modelId) => ({ specificationVersion: 'model-v1', provider: 'openai', modelId, async *stream() {} }) };\n`,
    );
    const registry = new Registry({
      importModule: () => import(pathToFileURL(file).href),
      contractAdapters: [modelV0ToV1],
    });

    const model = await registry.model('openai:gpt-old');

    expect(model.modelId).toBe('gpt-old');
    expect((await registry.modelProvider('openai')).specificationVersion).toBe('model-v1');
  });

  it('are passed on by createRuntime', async () => {
    const runtime = createRuntime({
      contractAdapters: [modelV0ToV1],
      models: [legacyProvider() as unknown as ModelProviderV1],
    });

    expect((await runtime.registry.model('legacy:m')).modelId).toBe('m');
  });

  it('leave a version no adapter reads to the version check', () => {
    const registry = new Registry();

    expect(() => registry.register(legacyProvider() as unknown as Plugin)).toThrow(PluginVersionError);
    expect(() => registry.register(legacyProvider() as unknown as Plugin)).toThrow(
      /implements specification 'model-v0', but this @ghost\/core supports 'model-v1'/,
    );
  });

  it('stop at a cycle of adapters instead of looping', () => {
    const back: ContractAdapter = {
      kind: 'model',
      from: 'model-v1',
      to: 'model-v0',
      adapt: (plugin) => ({ ...plugin, specificationVersion: 'model-v0' }),
    };
    const forward: ContractAdapter = {
      kind: 'model',
      from: 'model-v0',
      to: 'model-w',
      adapt: (plugin) => ({ ...plugin, specificationVersion: 'model-w' }),
    };
    const loop: ContractAdapter = {
      kind: 'model',
      from: 'model-w',
      to: 'model-v0',
      adapt: (plugin) => ({ ...plugin, specificationVersion: 'model-v0' }),
    };
    const registry = new Registry({ contractAdapters: [back, forward, loop] });

    expect(() => registry.register(legacyProvider() as unknown as Plugin)).toThrow(PluginVersionError);
  });

  it('report an adapter that throws or returns something else, naming the step', () => {
    const throwing: ContractAdapter = {
      ...modelV0ToV1,
      adapt: () => {
        throw new Error('no createModel');
      },
    };
    const renaming: ContractAdapter = {
      ...modelV0ToV1,
      adapt: (old) => ({ ...old, name: 'other', specificationVersion: 'model-v1' }),
    };
    const stale: ContractAdapter = { ...modelV0ToV1, adapt: (old) => old };

    const failure = (adapter: ContractAdapter) => () =>
      new Registry({ contractAdapters: [adapter] }).register(legacyProvider() as unknown as Plugin);

    expect(failure(throwing)).toThrow(PluginInvalidError);
    expect(failure(throwing)).toThrow(/'model-v0' → 'model-v1' failed on it: Error: no createModel/);
    expect(failure(renaming)).toThrow(/must keep the kind and name/);
    expect(failure(stale)).toThrow(/returned no 'model-v1' model plugin named 'legacy'/);
  });

  it('are checked when the registry is made', () => {
    for (const adapter of [
      null,
      { kind: 'tool', from: 'tool-v1', to: 'tool-v2', adapt: () => ({}) },
      { kind: 'model', from: 'model-v1', to: 'model-v1', adapt: () => ({}) },
      { kind: 'model', from: 'model-v0', to: 'model-v1' },
    ]) {
      expect(
        () => new Registry({ contractAdapters: [adapter as unknown as ContractAdapter] }),
        JSON.stringify(adapter),
      ).toThrow(PluginInvalidError);
    }
    expect(() => new Registry({ contractAdapters: 'all' as never })).toThrow(/list of contract adapters/);
  });
});
