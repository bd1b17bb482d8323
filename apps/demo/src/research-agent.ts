import { codeMode } from '@ghost/code-mode';
import { type Agent, defineAgent, defineTool, type ModelV1 } from '@ghost/core';
import { ScriptedModel } from '@ghost/core/testing';
import Type from 'typebox';

/** The help center the research agent looks things up in (the spec's two entries). */
const helpCenter: Readonly<Record<string, string>> = {
  'refund policy': 'Refunds are available within 30 days.',
  'shipping policy': 'Standard shipping takes three to five days.',
};

/** Finds a support answer by topic, pausing briefly as a real lookup would. */
const helpCenterLookup = defineTool({
  name: 'help_center_lookup',
  description: 'Find a support answer by topic.',
  input: Type.Object({ query: Type.String({ description: 'The topic, such as "refund policy".' }) }),
  async execute({ query }, { signal }) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    signal.throwIfAborted();
    return helpCenter[query] ?? 'No matching entry.';
  },
});

/** The program the scripted model writes: both lookups in parallel, joined. */
export const researchProgram = `const results = await Promise.all([
  tools.help_center_lookup({ query: 'refund policy' }),
  tools.help_center_lookup({ query: 'shipping policy' }),
]);

text(results.join('\\n'));`;

/**
 * The model is scripted, so the demo runs anywhere without an API key: it sends one program to
 * `exec`, then answers from the program's output.
 */
export function createScriptedResearchModel(): ScriptedModel {
  return new ScriptedModel(
    [
      {
        text: 'I will look up both policies in one program.',
        toolCalls: [{ name: 'exec', input: { source: researchProgram } }],
        usage: { inputTokens: 412, outputTokens: 64 },
      },
      {
        text: ['Refunds are available within 30 days. ', 'Standard shipping takes three to five days.'],
        delayMs: 15,
        usage: { inputTokens: 538, outputTokens: 22 },
      },
    ],
    { provider: 'scripted', modelId: 'research-demo' },
  );
}

/**
 * The spec's research agent in code mode. Programs run in QuickJS in a fresh host process per
 * program, inside the native sandbox (bubblewrap on Linux, from `@ghost/sandbox-bwrap`): code
 * mode's default, which refuses to run where it cannot contain the program.
 */
export function createResearchAgent(model: ModelV1 | string = createScriptedResearchModel()): Agent {
  return defineAgent({
    name: 'research',
    instructions:
      'You are a support researcher. Answer from the help center only: look every topic up with one program that calls the lookups in parallel, then answer in two short sentences.',
    model,
    tools: [helpCenterLookup],
    codeMode: codeMode({ engine: 'quickjs' }),
  });
}
