import { codeMode } from '@ghost/code-mode';
import { createRuntime, defineAgent, defineTool, type StreamEvent } from '@ghost/core';
import { ScriptedModel } from '@ghost/core/testing';
import Type from 'typebox';
import { describe, expect, it, vi } from 'vitest';
import { quickjsEngine } from './quickjs-engine.js';

// Tools that need a person's approval (`needsApproval`) in code mode: model-facing by default,
// in the program catalog with `programApprovals: true` (a QuickJS program, unrestricted sandbox).

function sendEmailTool() {
  const execute = vi.fn(({ to }: { to: string }) => `sent to ${to}`);
  const tool = defineTool({
    name: 'send_email',
    description: 'Sends an email.',
    input: Type.Object({ to: Type.String() }),
    needsApproval: true,
    execute,
  });
  return { tool, execute };
}

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a person up.',
  input: Type.Object({ name: Type.String() }),
  execute: ({ name }) => `${name.toLowerCase()}@example.com`,
});

function toolResults(model: ScriptedModel, call: number) {
  return (model.calls[call]?.messages ?? []).filter((message) => message.role === 'tool');
}

describe('code mode and tools that need approval', () => {
  it('keeps such a tool model-facing by default: out of the program catalog, approved as its own step', async () => {
    const { tool, execute } = sendEmailTool();
    const model = new ScriptedModel([
      {
        toolCalls: [
          {
            id: 'exec_1',
            name: 'exec',
            input: {
              source: "const to = await tools.lookup({ name: 'Ana' }); ('send_email' in tools) + ':' + to",
            },
          },
        ],
      },
      { toolCalls: [{ id: 'mail_1', name: 'send_email', input: { to: 'ana@example.com' } }] },
      { text: 'Emailed Ana.' },
    ]);
    const agent = defineAgent({
      name: 'mailer',
      model,
      tools: [lookup, tool],
      codeMode: codeMode({ engine: quickjsEngine, sandbox: 'unrestricted' }),
    });
    const run = agent.createRun('Email Ana.', { runtime: createRuntime() });
    const events: StreamEvent[] = [];
    const stream = run.stream();
    for await (const event of stream) {
      events.push(event);
      if (event.type === 'approval_requested') run.approve(event.data.approvalId);
    }
    await stream.run;
    expect(run.error).toBeUndefined();
    expect(run.outcome).toBe('completed');
    const modelTools = model.calls[0]?.tools.map((entry) => entry.name) ?? [];
    expect(modelTools).toEqual(expect.arrayContaining(['exec', 'wait', 'stop', 'send_email']));
    expect(modelTools).not.toContain('lookup');
    expect(model.calls[0]?.instructions).not.toContain('send_email');
    expect(JSON.parse((toolResults(model, 1)[0] as { content: string }).content)).toMatchObject({
      status: 'completed',
      value: 'false:ana@example.com',
    });
    expect(execute).toHaveBeenCalledTimes(1);
    const requested = events.find((event) => event.type === 'approval_requested');
    expect(requested?.data).toMatchObject({
      toolCallId: 'mail_1',
      toolName: 'send_email',
      agentName: 'mailer',
    });
  }, 60_000);

  it('with programApprovals: true, a program’s call waits for the decision (exec answers still_working)', async () => {
    const { tool, execute } = sendEmailTool();
    const model = new ScriptedModel([
      {
        toolCalls: [
          {
            id: 'exec_1',
            name: 'exec',
            input: { source: "await tools.send_email({ to: 'ana@example.com' })" },
          },
        ],
      },
      { toolCalls: [{ id: 'wait_1', name: 'wait', input: {} }] },
      { text: 'Emailed Ana.' },
    ]);
    const agent = defineAgent({
      name: 'mailer',
      model,
      tools: [tool],
      codeMode: codeMode({
        engine: quickjsEngine,
        sandbox: 'unrestricted',
        programApprovals: true,
        observationWindowMs: 1_000,
      }),
    });
    const run = agent.createRun('Email Ana.', { runtime: createRuntime() });
    const stream = run.stream();
    let approvalId: string | undefined;
    for await (const event of stream) {
      if (event.type === 'approval_requested') approvalId = event.data.approvalId;
      // Answered once exec has reported the program still working (the model's second turn).
      if (event.type === 'model_start' && event.data.turn === 2 && approvalId !== undefined) {
        run.approve(approvalId);
      }
    }
    await stream.run;
    expect(run.error).toBeUndefined();
    expect(run.outcome).toBe('completed');
    const modelTools = model.calls[0]?.tools.map((entry) => entry.name) ?? [];
    expect(modelTools).not.toContain('send_email');
    expect(model.calls[0]?.instructions).toContain('send_email');
    expect(JSON.parse((toolResults(model, 1)[0] as { content: string }).content)).toMatchObject({
      status: 'still_working',
    });
    expect(JSON.parse((toolResults(model, 2)[1] as { content: string }).content)).toMatchObject({
      status: 'completed',
      value: 'sent to ana@example.com',
    });
    expect(execute).toHaveBeenCalledTimes(1);
  }, 60_000);

  it('refuses programApprovals that is not a boolean', () => {
    expect(() => codeMode({ programApprovals: 'yes' as never })).toThrow(/programApprovals is true or false/);
  });
});
