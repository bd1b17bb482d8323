// Chat Completions stream chunks in the shape of the openai SDK's `ChatCompletionChunk`.

type Chunk = Record<string, unknown>;

export const chatCompletionId = 'chatcmpl-0123';
export const chatModel = 'gpt-4.1-2025-04-14';

/** One chunk with the first choice's delta and, optionally, its finish reason. */
export function chatChunk(
  delta: Record<string, unknown>,
  finishReason: string | null = null,
  identity: { id?: string; model?: string } = {},
): Chunk {
  return {
    id: identity.id ?? chatCompletionId,
    object: 'chat.completion.chunk',
    created: 1_765_000_000,
    model: identity.model ?? chatModel,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  };
}

/** The last chunk OpenAI sends with `stream_options.include_usage`: no choices, only usage. */
export function chatUsageChunk(counts: {
  prompt: number;
  cached?: number;
  completion: number;
  reasoning?: number;
}): Chunk {
  return {
    id: chatCompletionId,
    object: 'chat.completion.chunk',
    created: 1_765_000_000,
    model: chatModel,
    choices: [],
    usage: {
      prompt_tokens: counts.prompt,
      completion_tokens: counts.completion,
      total_tokens: counts.prompt + counts.completion,
      prompt_tokens_details: counts.cached === undefined ? {} : { cached_tokens: counts.cached },
      completion_tokens_details: counts.reasoning === undefined ? {} : { reasoning_tokens: counts.reasoning },
    },
  };
}

/** A text answer: a role chunk, one chunk per piece, a finish chunk. */
export function chatText(pieces: readonly string[], finishReason = 'stop'): Chunk[] {
  return [
    chatChunk({ role: 'assistant', content: '' }),
    ...pieces.map((content) => chatChunk({ content })),
    chatChunk({}, finishReason),
  ];
}

/** One `delta.tool_calls` fragment. */
export function toolCallFragment(
  index: number,
  fields: { id?: string; name?: string; arguments?: string },
): Record<string, unknown> {
  return {
    index,
    ...(fields.id !== undefined ? { id: fields.id, type: 'function' } : {}),
    function: {
      ...(fields.name !== undefined ? { name: fields.name } : {}),
      ...(fields.arguments !== undefined ? { arguments: fields.arguments } : {}),
    },
  };
}
