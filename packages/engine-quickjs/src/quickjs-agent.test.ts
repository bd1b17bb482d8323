import { codeMode, openCodeModeSession } from '@ghost/code-mode';
import { createRuntime, defineAgent, defineTool } from '@ghost/core';
import { CleanupError } from '@ghost/core/plugin';
import { defineSandboxBackend, type SandboxProcess } from '@ghost/core/sandbox';
import { ScriptedModel } from '@ghost/core/testing';
import { unrestrictedSandbox } from '@ghost/sandbox-unrestricted';
import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { quickjsEngine } from './quickjs-engine.js';

const echo = defineTool({
  name: 'echo',
  description: 'Returns its input.',
  input: Type.Object({ text: Type.String() }),
  execute: ({ text }) => text,
});

function toolResults(model: ScriptedModel, call: number): { content: string; isError?: boolean }[] {
  return (model.calls[call]?.messages ?? []).filter((message) => message.role === 'tool') as {
    content: string;
    isError?: boolean;
  }[];
}

describe('code mode settings from the runtime', () => {
  it("merges the runtime's defaults with the agent's key by key, limits included", async () => {
    const runtime = createRuntime({
      engines: [quickjsEngine],
      codeMode: { sandbox: 'unrestricted', limits: { programs: 1 } },
    });
    const model = new ScriptedModel([
      {
        toolCalls: [
          {
            name: 'exec',
            input: {
              source:
                'const settled = await Promise.allSettled(["a", "b", "c"].map((text) => tools.echo({ text })));\nsettled.map((each) => each.status)',
            },
          },
        ],
      },
      { toolCalls: [{ name: 'exec', input: { source: '"second"' } }] },
      { text: 'done' },
    ]);
    const agent = defineAgent({
      name: 'a',
      model,
      tools: [echo],
      codeMode: codeMode({ limits: { toolCalls: 2 } }),
    });
    const run = await agent.ask('go', { runtime });
    expect(run.outcome).toBe('completed');
    expect(run.sandbox?.name).toBe('unrestricted');
    expect(JSON.parse(toolResults(model, 1)[0]?.content ?? '{}').value).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
    ]);
    expect(toolResults(model, 2)[1]).toMatchObject({
      isError: true,
      content: expect.stringMatching(/its 1 programs \(limits\.programs\)/),
    });
  });
});

describe('cleanupSeconds', () => {
  it('raises CleanupError when a backend cannot release a host in time', async () => {
    // A backend whose processes never finish closing: the session must not claim they ended.
    const stuck = defineSandboxBackend({
      kind: 'sandbox',
      specificationVersion: 'sandbox-v1',
      name: 'stuck',
      platforms: ['linux', 'darwin'],
      detect: async () => ({
        available: true,
        capabilities: { ...(await unrestrictedSandbox.detect()).capabilities, processTreeOwnership: true },
      }),
      async spawn(spec) {
        const child = await unrestrictedSandbox.spawn({ ...spec, network: 'shared' });
        const neverCloses: SandboxProcess = {
          ...child,
          channel: child.channel,
          close: () => {
            child.kill();
            void child.close();
            return new Promise(() => {});
          },
        };
        return neverCloses;
      },
    });
    const opened = await openCodeModeSession({
      engine: quickjsEngine,
      sandbox: stuck,
      limits: { cleanupSeconds: 0.3 },
    });
    expect((await opened.session.execute('1')).value).toBe(1);
    const started = Date.now();
    await expect(opened.session.close()).rejects.toThrow(CleanupError);
    expect(Date.now() - started).toBeLessThan(3_000);
    await opened.close().catch(() => {});
  });
});
