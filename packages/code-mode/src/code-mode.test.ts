import { createRuntime, defineAgent, defineTool, SandboxUnavailableError } from '@ghost/core';
import { defineSandboxBackend } from '@ghost/core/sandbox';
import { ScriptedModel } from '@ghost/core/testing';
import { unrestrictedCapabilities } from '@ghost/sandbox-unrestricted';
import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { codeMode } from './code-mode.js';
import { defineHostEngine } from './define-host-engine.js';
import { CodeModeConfigurationError } from './errors.js';
import { defaultCodeModeLimits, resolveCodeModeLimits } from './limits.js';
import { openCodeModeSession } from './open-code-mode-session.js';
import { createSandboxFactory } from './parent/sandbox-factory.js';
import { ToolBroker } from './tool-broker.js';
import { ToolCatalog } from './tool-catalog.js';

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks up.',
  input: Type.Object({}),
  execute: () => 'x',
});
const model = () => new ScriptedModel([{ text: 'hi' }]);

function agentWith(options: Parameters<typeof codeMode>[0], tools = [lookup]) {
  return () => defineAgent({ name: 'research', model: model(), tools, codeMode: codeMode(options) });
}

describe('codeMode() settings', () => {
  it('rejects unknown options and limits, and bad values, when the agent is defined', () => {
    expect(() => codeMode({ engines: 'quickjs' } as never)).toThrow(/has no option 'engines'/);
    expect(() => codeMode({ limits: { wallSecond: 5 } as never })).toThrow(
      /no limit 'wallSecond'. Known limits: sourceBytes/,
    );
    expect(() => codeMode({ limits: { programs: 0 } })).toThrow(
      /limits.programs is 0; use a whole number greater than 0/,
    );
    expect(() => codeMode({ limits: { toolCalls: 2.5 } })).toThrow(CodeModeConfigurationError);
    expect(() => codeMode({ placement: 'cloud' as never })).toThrow(
      /placement is 'process', 'session' or 'thread'/,
    );
    expect(() => codeMode({ observationWindowMs: -1 })).toThrow(/observationWindowMs/);
  });

  it('rejects an except name that is not a tool, and tools code mode cannot name', () => {
    expect(agentWith({ except: ['lookpu'] })).toThrow(
      /except names 'lookpu', which is not one of the agent's tools \(lookup\)/,
    );
    const exec = defineTool({
      name: 'exec',
      description: 'Runs.',
      input: Type.Object({}),
      execute: () => 'x',
    });
    expect(agentWith({}, [exec])).toThrow(/reserves/);
    expect(agentWith({ except: ['exec'] }, [exec])).toThrow(/exec, wait and stop are code mode's controls/);
    const clash = defineTool({
      name: 'look-up',
      description: 'x',
      input: Type.Object({}),
      execute: () => 'x',
    });
    const clash2 = defineTool({
      name: 'look_up',
      description: 'x',
      input: Type.Object({}),
      execute: () => 'x',
    });
    expect(agentWith({}, [clash, clash2])).toThrow(/would both be tools.look_up/);
    expect(agentWith({ except: ['look-up'] }, [clash, clash2])).not.toThrow();
  });

  it('keeps a tool that needs approval model-facing, which a control name cannot be, unless programApprovals', () => {
    const exec = defineTool({
      name: 'exec',
      description: 'Runs.',
      input: Type.Object({}),
      needsApproval: true,
      execute: () => 'x',
    });
    expect(agentWith({}, [exec])).toThrow(/'exec' needs approval, so it stays model-facing/);
    // In the catalog, the name is what the program catalog refuses instead.
    expect(agentWith({ programApprovals: true }, [exec])).toThrow(/reserves/);
    const gated = defineTool({ ...lookup, name: 'gated', needsApproval: () => false });
    expect(agentWith({}, [lookup, gated])).not.toThrow();
    expect(() => codeMode({ programApprovals: 1 as never })).toThrow(/programApprovals is true or false/);
  });

  it('rejects a codeMode value not made by codeMode()', () => {
    expect(() => defineAgent({ name: 'a', model: model(), codeMode: { kind: 'other' } as never })).toThrow(
      /not made with codeMode\(\)/,
    );
  });

  it('merges limits key by key: defaults, then the runtime, then the agent', () => {
    expect(resolveCodeModeLimits({ wallSeconds: 900, programs: 4 }, { programs: 2 })).toEqual({
      ...defaultCodeModeLimits,
      wallSeconds: 900,
      programs: 2,
    });
  });

  it("fails the run closed with SandboxUnavailableError when 'native' has no backend installed", async () => {
    const agent = defineAgent({ name: 'research', model: model(), tools: [lookup], codeMode: codeMode({}) });
    // An application with the engine but without @ghost/sandbox-bwrap (or seatbelt): importing the
    // backend fails as Node does, and the engine loads (one that never gets to start a host here;
    // code-mode cannot depend on @ghost/engine-quickjs, which depends on it).
    const engine = defineHostEngine({
      name: 'quickjs',
      language: 'javascript',
      runtimePaths: [],
      placements: ['process'],
      instructions: () => '',
      host: { script: '/nonexistent/host.js' },
    });
    const withoutNativeBackend = createRuntime({
      importModule: async (specifier) => {
        if (specifier.startsWith('@ghost/sandbox-')) {
          throw Object.assign(new Error(`Cannot find package '${specifier}' imported from /app`), {
            code: 'ERR_MODULE_NOT_FOUND',
          });
        }
        return { default: engine };
      },
    });
    const run = await agent.ask('hi', { runtime: withoutNativeBackend });
    expect(run.outcome).toBe('failed');
    expect(SandboxUnavailableError.isInstance(run.error)).toBe(true);
    expect(run.error?.message).toMatch(/native sandbox|not supported/);
    expect(run.error?.message).toContain("sandbox: 'unrestricted'");
  });

  it('refuses the thread placement without an explicit unrestricted sandbox', async () => {
    const agent = defineAgent({
      name: 'r',
      model: model(),
      tools: [lookup],
      codeMode: codeMode({ placement: 'thread' }),
    });
    const run = await agent.ask('hi', { runtime: createRuntime() });
    expect(run.error?.message).toMatch(/placement 'thread' .* needs sandbox: 'unrestricted'/);
    expect(run.error).toMatchObject({ code: 'CODE_MODE_THREAD_NEEDS_UNRESTRICTED' });
  });

  it('refuses the thread placement with a named sandbox when the agent is defined', () => {
    expect(() => codeMode({ placement: 'thread', sandbox: 'native' })).toThrow(
      expect.objectContaining({
        name: 'CodeModeConfigurationError',
        code: 'CODE_MODE_THREAD_NEEDS_UNRESTRICTED',
        message: expect.stringMatching(
          /^codeMode\(\): placement 'thread' runs programs in worker threads of this process, where no sandbox can contain them, so it needs sandbox: 'unrestricted' named explicitly \(the sandbox is 'native'\)\./,
        ),
      }),
    );
    expect(() => codeMode({ placement: 'thread', sandbox: 'unrestricted' })).not.toThrow();
  });

  it('checks resultBytes and bounds outputBytes and resultBytes by the frame cap', () => {
    expect(defaultCodeModeLimits.resultBytes).toBe(4 * 1024 * 1024);
    expect(() => codeMode({ limits: { resultBytes: 64 * 1024 * 1024 } })).toThrow(
      /limits\.resultBytes is 67,108,864; it can be at most 33,554,432 \(32 MiB\)/,
    );
    expect(() => codeMode({ limits: { outputBytes: 40_000_000 } })).toThrow(
      /limits\.outputBytes is 40,000,000/,
    );
    expect(() => codeMode({ limits: { resultBytes: 32 * 1024 * 1024, outputBytes: 10_000 } })).not.toThrow();
  });
});

describe('the thread placement outside an agent', () => {
  // An engine that opens host sessions the way every JavaScript engine does; it never gets as far
  // as starting a host here.
  const threadEngine = defineHostEngine({
    name: 'threaded',
    language: 'javascript',
    runtimePaths: [],
    placements: ['process', 'thread'],
    instructions: () => '',
    host: { script: '/nonexistent/host.js', threadWorker: '/nonexistent/thread-worker.js' },
  });
  const containing = defineSandboxBackend({
    kind: 'sandbox',
    specificationVersion: 'sandbox-v1',
    name: 'jail',
    platforms: ['linux', 'darwin'],
    detect: async () => ({
      available: true,
      capabilities: { ...unrestrictedCapabilities, processTreeOwnership: true, subprocessDenial: true },
    }),
    spawn: async () => {
      throw new Error('not reached: the thread placement starts no process');
    },
  });
  const refusal = (sandbox: string) =>
    expect.objectContaining({
      name: 'CodeModeConfigurationError',
      code: 'CODE_MODE_THREAD_NEEDS_UNRESTRICTED',
      message: expect.stringContaining(
        `needs sandbox: 'unrestricted' named explicitly (the sandbox is '${sandbox}')`,
      ),
    });

  it("openCodeModeSession refuses it with 'native' (the default) and with a sandbox backend", async () => {
    await expect(openCodeModeSession({ engine: threadEngine, placement: 'thread' })).rejects.toThrow(
      refusal('native'),
    );
    await expect(
      openCodeModeSession({ engine: threadEngine, sandbox: containing, placement: 'thread' }),
    ).rejects.toThrow(refusal('jail'));
  });

  it("an engine's open() refuses it when handed a sandbox other than unrestricted", async () => {
    const limits = resolveCodeModeLimits();
    const catalog = ToolCatalog.fromTools([], 'test');
    const sandbox = await createSandboxFactory(containing, createRuntime(), limits);
    expect(() =>
      threadEngine.open({
        broker: new ToolBroker({ catalog, limits, callTool: () => Promise.reject(new Error('no tools')) }),
        sandbox,
        limits,
        catalog,
        placement: 'thread',
        observationWindowMs: 1_000,
        prewarm: false,
      }),
    ).toThrow(refusal('jail'));
  });
});

describe('createSandboxFactory', () => {
  const capabilities = {
    processTreeOwnership: false,
    subprocessDenial: false,
    networkIsolation: true,
    filesystemIsolation: true,
    memoryLimit: true,
    cpuLimit: true,
    fileSizeLimit: true,
    openFilesLimit: true,
    processLimit: true,
    syscallFilter: true,
    environmentIsolation: true,
  };
  const backend = (detection: object) =>
    defineSandboxBackend({
      kind: 'sandbox',
      specificationVersion: 'sandbox-v1',
      name: 'jail',
      platforms: ['linux'],
      detect: async () => detection as never,
      spawn: async () => {
        throw new Error('not reached');
      },
    });

  it("passes on the backend's reason when it is unavailable here", async () => {
    const unavailable = backend({
      available: false,
      reason: 'bwrap is not installed: apt-get install bubblewrap',
      capabilities,
    });
    await expect(createSandboxFactory(unavailable, createRuntime(), defaultCodeModeLimits)).rejects.toThrow(
      "Sandbox 'jail' cannot contain programs on this machine: bwrap is not installed: apt-get install bubblewrap.",
    );
  });

  it('refuses a backend that neither owns the process tree nor denies subprocesses', async () => {
    await expect(
      createSandboxFactory(
        backend({ available: true, capabilities }),
        createRuntime(),
        defaultCodeModeLimits,
      ),
    ).rejects.toThrow(/neither owns the program's process tree nor denies subprocesses/);
  });
});
