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

/** What the demo asks first, and what it asks once the conversation has begun. */
export const firstQuestion = 'What are the refund and shipping policies?';
export const followUpQuestion = 'Could I still get a refund for an order I placed 40 days ago?';

/**
 * The scripted answer to the follow-up: from the conversation, with no program, as a model that
 * remembers the first answer would give it.
 */
export function createScriptedFollowUpModel(): ScriptedModel {
  return new ScriptedModel(
    [
      {
        text: [
          'No: as the help center said earlier, refunds are available within 30 days, ',
          'and 40 days is past that.',
        ],
        delayMs: 15,
        usage: { inputTokens: 611, outputTokens: 24 },
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
      'You are a support researcher. Answer from the help center only: look every topic you have not looked up yet in this conversation up with one program that calls the lookups in parallel, then answer in two short sentences.',
    model,
    tools: [helpCenterLookup],
    codeMode: codeMode({ engine: 'quickjs' }),
  });
}
