import { ConfigurationError } from '@ghost/core';
import { PluginInvalidError } from '@ghost/core/plugin';
import { describe, expect, it } from 'vitest';
import { defineHostEngine, type HostEngineDefinition } from './define-host-engine.js';
import { defineEngine, type EngineV1, isEngineV1 } from './engine.js';
import { CodeModeConfigurationError } from './errors.js';
import { openCodeModeSession } from './open-code-mode-session.js';
import { descendantProcesses } from './testing/child-processes.js';

const definition: HostEngineDefinition = {
  name: 'tiny',
  language: 'javascript',
  runtimePaths: [],
  placements: ['process'],
  instructions: () => 'Write JavaScript.',
  host: { script: '/nonexistent/host.js' },
};

describe('defineHostEngine', () => {
  it('makes a full engine-v1 engine, frozen, with the definition it was given', () => {
    const engine = defineHostEngine(definition);

    expect(isEngineV1(engine)).toBe(true);
    expect(engine).toMatchObject({ kind: 'engine', specificationVersion: 'engine-v1', name: 'tiny' });
    expect(engine.placements).toEqual(['process']);
    expect(Object.isFrozen(engine)).toBe(true);
    expect(engine.capabilities).toBeUndefined();
    expect(defineHostEngine({ ...definition, capabilities: [] }).capabilities).toEqual([]);
  });

  it.each([
    ['no host', { host: undefined }, /needs host: \{ script \}/],
    ['a relative host script', { host: { script: 'host.js' } }, /host\.script must be the absolute path/],
    [
      'a relative thread worker',
      { host: { script: '/h.js', threadWorker: 'w.js' } },
      /host\.threadWorker must be the absolute path/,
    ],
    [
      'node options that are not strings',
      { host: { script: '/h.js', nodeOptions: [1] } },
      /host\.nodeOptions/,
    ],
    ['no placements', { placements: [] }, /placements must list one or more/],
    ['an unknown placement', { placements: ['cloud'] }, /placements must list one or more/],
    ["'thread' without a thread worker", { placements: ['process', 'thread'] }, /no host\.threadWorker/],
    ['a prepare that is not a function', { prepare: 'check' }, /prepare must be a function/],
    [
      'an unknown capability',
      { capabilities: ['guest-memory'] },
      /no engine capability is named "guest-memory"/,
    ],
    ['capabilities that are not a list', { capabilities: 'all' }, /capabilities must be a list/],
  ])('refuses %s where the engine is defined', (_case, change, message) => {
    const attempt = () => defineHostEngine({ ...definition, ...change } as unknown as HostEngineDefinition);
    expect(attempt).toThrow(CodeModeConfigurationError);
    expect(attempt).toThrow(message);
  });

  it('finds runtime paths given as a function when they are first read, once, not where the engine is defined', () => {
    let walks = 0;
    const engine = defineHostEngine({
      ...definition,
      runtimePaths: () => {
        walks += 1;
        return ['/opt/tiny', '/opt/tiny-deps'];
      },
    });
    expect(isEngineV1(engine)).toBe(true);
    expect(Object.keys(engine)).toContain('runtimePaths');
    expect(walks).toBe(0);

    expect(engine.runtimePaths).toEqual(['/opt/tiny', '/opt/tiny-deps']);
    expect(engine.runtimePaths).toBe(engine.runtimePaths);
    expect(Object.isFrozen(engine.runtimePaths)).toBe(true);
    expect(walks).toBe(1);
  });

  it('refuses runtime paths that are not a list of strings, naming what to give, when they are read', () => {
    expect(() => defineHostEngine({ ...definition, runtimePaths: '/opt' as unknown as string[] })).toThrow(
      /runtimePaths must be a list of absolute paths, or a function returning one/,
    );
    const engine = defineHostEngine({ ...definition, runtimePaths: () => [42] as unknown as string[] });
    expect(() => engine.runtimePaths).toThrow(CodeModeConfigurationError);
    expect(() => engine.runtimePaths).toThrow(/Engine 'tiny': runtimePaths must be a list/);
  });

  it('refuses a session with the error prepare throws, starting no host', async () => {
    const refusal = new ConfigurationError('The tiny interpreter is not installed.', {
      code: 'TINY_MISSING',
    });
    let prepared = 0;
    const engine = defineHostEngine({
      ...definition,
      prepare: () => {
        prepared += 1;
        throw refusal;
      },
    });

    await expect(openCodeModeSession({ engine, sandbox: 'unrestricted' })).rejects.toBe(refusal);
    await expect(openCodeModeSession({ engine, sandbox: 'unrestricted' })).rejects.toBe(refusal);
    expect(prepared).toBe(2);
    expect(await descendantProcesses()).toEqual([]);
  });
});

describe('defineEngine', () => {
  it('refuses an engine with no name or an invalid one, as every plugin is checked', () => {
    const { host: _host, ...rest } = definition;
    const engine = { ...rest, open: () => ({}) as never } as unknown as EngineV1;
    expect(() => defineEngine({ ...engine, name: undefined } as unknown as EngineV1)).toThrow(
      PluginInvalidError,
    );
    expect(() => defineEngine({ ...engine, name: 'has space' })).toThrow(/name "has space"/);
    expect(() => defineEngine({ ...engine, open: undefined } as unknown as EngineV1)).toThrow(
      /open\(\) function/,
    );
  });
});
