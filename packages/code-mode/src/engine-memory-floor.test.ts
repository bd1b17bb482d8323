import { createRuntime, defineAgent } from '@ghost/core';
import { ScriptedModel } from '@ghost/core/testing';
import { describe, expect, it } from 'vitest';
import { codeMode } from './code-mode.js';
import { defineHostEngine } from './define-host-engine.js';
import { CodeModeConfigurationError } from './errors.js';
import { openCodeModeSession } from './open-code-mode-session.js';

// An engine that needs 128 MiB; its host is never started, since the floor refuses first.
const hungry = defineHostEngine({
  name: 'hungry',
  language: 'javascript',
  runtimePaths: [],
  placements: ['process'],
  minimumMemoryBytes: 128 * 1024 * 1024,
  instructions: () => 'Write JavaScript.',
  host: { script: '/nonexistent/host.js' },
});

const refusal =
  "engine 'hungry' needs limits.memoryBytes of at least 134217728 bytes (128 MiB), and it is 67108864 (64 MiB). Set limits: { memoryBytes: 134217728 } or more, or use another engine.";

describe("an engine's memory floor (minimumMemoryBytes)", () => {
  it('refuses a session whose limits.memoryBytes is below it, saying what to set', async () => {
    const opening = openCodeModeSession({ engine: hungry, sandbox: 'unrestricted' });
    await expect(opening).rejects.toBeInstanceOf(CodeModeConfigurationError);
    await expect(opening).rejects.toMatchObject({
      code: 'CODE_MODE_LIMIT_INVALID',
      limit: 'memoryBytes',
      message: `openCodeModeSession(): ${refusal}`,
    });
  });

  it("refuses an agent's run the same way, when its code mode resolves the engine", async () => {
    const runtime = createRuntime({ engines: [hungry] });
    const agent = defineAgent({
      name: 'a',
      model: new ScriptedModel([{ text: 'never' }]),
      codeMode: codeMode({ engine: 'hungry', sandbox: 'unrestricted' }),
    });
    try {
      const run = await agent.ask('go', { runtime });
      expect(run.outcome).toBe('failed');
      expect(CodeModeConfigurationError.isInstance(run.error)).toBe(true);
      expect(run.error?.message).toBe(`Agent 'a' code mode: ${refusal}`);
    } finally {
      await runtime.close();
    }
  });

  it('is checked when the engine is defined', () => {
    expect(() =>
      defineHostEngine({
        name: 'odd',
        language: 'javascript',
        runtimePaths: [],
        placements: ['process'],
        minimumMemoryBytes: -1,
        instructions: () => '',
        host: { script: '/nonexistent/host.js' },
      }),
    ).toThrow("Engine 'odd': minimumMemoryBytes must be a positive whole number of bytes, or left out.");
  });
});
