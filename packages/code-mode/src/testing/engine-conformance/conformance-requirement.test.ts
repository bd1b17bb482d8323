import { defineSandboxBackend } from '@ghost/core/sandbox';
import { unrestrictedCapabilities } from '@ghost/sandbox-unrestricted';
import { describe, expect, it } from 'vitest';
import { defineHostEngine } from '../../define-host-engine.js';
import { createConformanceContext } from './conformance-context.js';
import { unboundedMemoryReason } from './conformance-requirement.js';
import {
  type EngineConformanceCapability,
  engineConformanceCapabilities,
} from './engine-conformance-capability.js';

// What the suite decides from an engine's capabilities and the sandbox's detect(); the cases
// themselves run end to end in the engines' and the example's conformance runs. No host starts
// here: the decisions read the engine definition and the sandbox's detect() only.
const engine = defineHostEngine({
  name: 'listed',
  language: 'javascript',
  runtimePaths: [],
  placements: ['process', 'session', 'thread'],
  instructions: () => '',
  host: { script: '/nonexistent/host.js', threadWorker: '/nonexistent/thread-worker.js' },
});

/** The definition `engine` was made from, for variants of it. */
function definitionOf(defined: typeof engine) {
  return {
    name: defined.name,
    language: defined.language,
    runtimePaths: defined.runtimePaths,
    placements: defined.placements,
    instructions: defined.instructions,
    host: { script: '/nonexistent/host.js', threadWorker: '/nonexistent/thread-worker.js' },
  };
}

/** A backend whose detect() reports a memory limit, as bubblewrap with cgroups does. */
const memoryLimited = defineSandboxBackend({
  kind: 'sandbox',
  specificationVersion: 'sandbox-v1',
  name: 'memory-limited',
  platforms: ['linux', 'darwin'],
  detect: async () => ({
    available: true,
    capabilities: {
      ...unrestrictedCapabilities,
      processTreeOwnership: true,
      subprocessDenial: true,
      memoryLimit: true,
    },
  }),
  spawn: async () => {
    throw new Error('not reached: deciding starts no process');
  },
});

describe('which conformance cases an engine runs', () => {
  // Contexts are made at collection time, as describeEngineConformance makes them.
  const everything = createConformanceContext({ engine });
  const unboundedHere = createConformanceContext({ engine, capabilities: [] });
  const boundedBySandbox = createConformanceContext({ engine, capabilities: [], sandbox: memoryLimited });
  const inThreads = createConformanceContext({ engine, capabilities: [], placement: 'thread' });

  it('holds an engine that lists nothing to every capability', () => {
    expect([...everything.capabilities]).toEqual([...engineConformanceCapabilities]);
    expect(unboundedHere.capabilities.size).toBe(0);
  });

  it("takes the capabilities the engine's definition declares, unless the option overrides them", () => {
    const declaresNone = defineHostEngine({ ...definitionOf(engine), capabilities: [] });
    expect(createConformanceContext({ engine: declaresNone }).capabilities.size).toBe(0);
    const overridden = createConformanceContext({
      engine: declaresNone,
      capabilities: ['guest-memory-limit'],
    });
    expect([...overridden.capabilities]).toEqual(['guest-memory-limit']);
  });

  it("runs the memory bomb for an engine with 'guest-memory-limit', whatever the sandbox", async () => {
    expect(await unboundedMemoryReason(everything)).toBeUndefined();
  });

  it('runs the memory bomb for an engine without it where the sandbox enforces a memory limit', async () => {
    expect(await unboundedMemoryReason(boundedBySandbox)).toBeUndefined();
    expect((await boundedBySandbox.sandboxCapabilities())?.memoryLimit).toBe(true);
  });

  it('skips it, saying why, where nothing would bound the guest', async () => {
    expect(await unboundedMemoryReason(unboundedHere)).toBe(
      "the engine does not list 'guest-memory-limit', and sandbox 'unrestricted' enforces no memory limit here",
    );
    expect(await unboundedMemoryReason(inThreads)).toBe(
      "the engine does not list 'guest-memory-limit', and the thread placement has no sandbox to bound memory",
    );
  });

  it('refuses a capability it does not know, naming the ones it does', () => {
    const misspelt = ['guest-memory'] as unknown as EngineConformanceCapability[];
    expect(() => createConformanceContext({ engine, capabilities: misspelt })).toThrow(
      expect.objectContaining({
        name: 'CodeModeConfigurationError',
        message:
          'describeEngineConformance: no engine capability is named "guest-memory"; the capabilities are guest-memory-limit.',
      }),
    );
  });
});
