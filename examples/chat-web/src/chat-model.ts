import type { ModelV1 } from '@ghost/core';
import { createScriptedShopModel } from './scripted-shop-model.js';

/** The model the app talks to, and how to say which it is. */
export interface ChatModel {
  /** A model string the runtime resolves (`'openai:gpt-5.1'`), or the scripted model. */
  readonly model: ModelV1 | string;
  /** Its name, for the page: `openai:gpt-5.1`, `scripted`. */
  readonly name: string;
  /** One line for the person starting the server. */
  readonly description: string;
  readonly isScripted: boolean;
}

/** The models picked when only an API key is set. */
const defaultOpenAIModel = 'openai:gpt-5.1';
const defaultAnthropicModel = 'anthropic:claude-sonnet-4-5';

/**
 * Picks the model from the environment, as the demo does: `GHOST_MODEL` (any model string, such
 * as `openai-compatible:http://127.0.0.1:11434/v1#qwen2.5-coder` for a local Ollama), else OpenAI
 * when `OPENAI_API_KEY` is set, else Anthropic when `ANTHROPIC_API_KEY` is, else the scripted
 * model, which needs no key and no network.
 */
export function chooseChatModel(environment: NodeJS.ProcessEnv = process.env): ChatModel {
  const named = environment.GHOST_MODEL?.trim();
  if (named) {
    return {
      model: named,
      name: named,
      description: `The model is ${named} (from GHOST_MODEL).`,
      isScripted: false,
    };
  }
  if (environment.OPENAI_API_KEY) {
    return {
      model: defaultOpenAIModel,
      name: defaultOpenAIModel,
      description: `The model is ${defaultOpenAIModel} (OPENAI_API_KEY is set; GHOST_MODEL picks another).`,
      isScripted: false,
    };
  }
  if (environment.ANTHROPIC_API_KEY) {
    return {
      model: defaultAnthropicModel,
      name: defaultAnthropicModel,
      description: `The model is ${defaultAnthropicModel} (ANTHROPIC_API_KEY is set; GHOST_MODEL picks another).`,
      isScripted: false,
    };
  }
  return {
    model: createScriptedShopModel(),
    name: 'scripted',
    description:
      'The model is scripted (no API key needed): set OPENAI_API_KEY, ANTHROPIC_API_KEY or GHOST_MODEL to use a real one.',
    isScripted: true,
  };
}
