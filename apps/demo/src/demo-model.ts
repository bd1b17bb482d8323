import type { ModelV1 } from '@ghost/core';
import { createScriptedFollowUpModel, createScriptedResearchModel } from './research-agent.js';

/** The model the demo talks to, and how to say which it is. */
export interface DemoModel {
  /** A model string the runtime resolves (`'openai:gpt-5.1'`), or the scripted model. */
  readonly model: ModelV1 | string;
  /** One line for the person running the demo. */
  readonly description: string;
  readonly isScripted: boolean;
}

/** The models the demo picks when only an API key is set. */
export const defaultOpenAIModel = 'openai:gpt-5.1';
export const defaultAnthropicModel = 'anthropic:claude-sonnet-4-5';

/**
 * Picks the demo's model from the environment: `GHOST_MODEL` (any model string, such as
 * `openai-compatible:http://127.0.0.1:11434/v1#qwen2.5-coder` for a local Ollama), else OpenAI
 * when `OPENAI_API_KEY` is set, else Anthropic when `ANTHROPIC_API_KEY` is, else the scripted
 * model, which needs no key and no network (scripted for the first question, or for the follow-up
 * when `isFollowUp`).
 */
export function chooseDemoModel(environment: NodeJS.ProcessEnv = process.env, isFollowUp = false): DemoModel {
  const named = environment.GHOST_MODEL?.trim();
  if (named) {
    return { model: named, description: `The model is ${named} (from GHOST_MODEL).`, isScripted: false };
  }
  if (environment.OPENAI_API_KEY) {
    return {
      model: defaultOpenAIModel,
      description: `The model is ${defaultOpenAIModel} (OPENAI_API_KEY is set; GHOST_MODEL picks another).`,
      isScripted: false,
    };
  }
  if (environment.ANTHROPIC_API_KEY) {
    return {
      model: defaultAnthropicModel,
      description: `The model is ${defaultAnthropicModel} (ANTHROPIC_API_KEY is set; GHOST_MODEL picks another).`,
      isScripted: false,
    };
  }
  return {
    model: isFollowUp ? createScriptedFollowUpModel() : createScriptedResearchModel(),
    description:
      'The model is scripted (no API key needed): set OPENAI_API_KEY, ANTHROPIC_API_KEY or GHOST_MODEL to use a real one.',
    isScripted: true,
  };
}
