import { type Agent, defineAgent, defineTool, ToolError } from '@ghost/core';
import { ScriptedModel } from '@ghost/core/testing';
import Type from 'typebox';

/** The help center the support agent answers from (the spec's refund and shipping entries). */
export const helpCenter: Readonly<Record<string, string>> = {
  refunds: 'Refunds go back to the original payment method within 5 business days of approval.',
  shipping: 'Orders ship within 2 business days; tracking arrives by email once the parcel leaves.',
};

/** Looks a topic up in the help center, pausing briefly as a real lookup would. */
export const helpCenterLookup = defineTool({
  name: 'help_center_lookup',
  description: 'Returns the help-center entry for a topic: "refunds" or "shipping".',
  input: Type.Object({ topic: Type.String({ description: 'The topic to look up.' }) }),
  async execute({ topic }, { signal }) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    signal.throwIfAborted();
    const text = helpCenter[topic];
    if (!text) throw new ToolError(`No help-center entry for '${topic}'. Known topics: refunds, shipping.`);
    return { topic, text };
  },
});

/**
 * The model is scripted, so the demo runs anywhere without an API key: it looks up both policies
 * in one turn (the two calls run concurrently), then answers from them.
 */
export function createScriptedSupportModel(): ScriptedModel {
  return new ScriptedModel(
    [
      {
        text: 'Let me check the refund and shipping policies.',
        toolCalls: [
          { name: 'help_center_lookup', input: { topic: 'refunds' } },
          { name: 'help_center_lookup', input: { topic: 'shipping' } },
        ],
        usage: { inputTokens: 182, outputTokens: 41 },
      },
      {
        text: [
          'Refunds go back to your original payment method within 5 business days of approval. ',
          'Orders ship within 2 business days, and tracking arrives by email once the parcel leaves.',
        ],
        delayMs: 15,
        usage: { inputTokens: 305, outputTokens: 38 },
      },
    ],
    { provider: 'scripted', modelId: 'support-demo' },
  );
}

/** The spec's support agent. */
export function createSupportAgent(model = createScriptedSupportModel()): Agent {
  return defineAgent({
    name: 'support',
    instructions: 'You are a support agent. Answer from the help center only, in two sentences or fewer.',
    model,
    tools: [helpCenterLookup],
  });
}
