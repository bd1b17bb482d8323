import type { ModelV1 } from '@ghost/core';
import type {
  ModelAssistantMessage,
  ModelReasoning,
  ModelRequest,
  ModelStreamPart,
  ProviderOptions,
} from '@ghost/core/provider';

/** A request with nothing but what the test gives. */
export function modelRequest(fields: Partial<ModelRequest> = {}): ModelRequest {
  return { instructions: '', messages: [{ role: 'user', content: 'Hello' }], tools: [], ...fields };
}

/** Every part the model streams for `request`, in order. */
export async function streamAll(
  model: ModelV1,
  request: ModelRequest,
  signal: AbortSignal = new AbortController().signal,
): Promise<ModelStreamPart[]> {
  const parts: ModelStreamPart[] = [];
  for await (const part of model.stream(request, { signal })) parts.push(part);
  return parts;
}

/** The parts streamed before the stream failed, and the error it failed with. */
export async function streamUntilError(
  model: ModelV1,
  request: ModelRequest,
  signal: AbortSignal = new AbortController().signal,
): Promise<{ parts: ModelStreamPart[]; error: unknown }> {
  const parts: ModelStreamPart[] = [];
  try {
    for await (const part of model.stream(request, { signal })) parts.push(part);
  } catch (error) {
    return { parts, error };
  }
  throw new Error(`the stream finished without failing: ${JSON.stringify(parts)}`);
}

/** The text of all `text-delta` parts. */
export function textOf(parts: readonly ModelStreamPart[]): string {
  return parts.map((part) => (part.type === 'text-delta' ? part.text : '')).join('');
}

/**
 * The assistant message a turn's parts make, as an agent assembles it for the next turn: the
 * text, each tool call (arguments from its deltas, provider metadata from its stop) and each
 * reasoning block as `reasoning-end` delivered it.
 */
export function assistantMessageFrom(parts: readonly ModelStreamPart[]): ModelAssistantMessage {
  const calls = new Map<
    number,
    { id: string; name: string; arguments: string; providerMetadata?: ProviderOptions }
  >();
  const reasoning: ModelReasoning[] = [];
  for (const part of parts) {
    if (part.type === 'tool-call-start')
      calls.set(part.index, { id: part.id, name: part.name, arguments: '' });
    const call = 'index' in part ? calls.get(part.index) : undefined;
    if (part.type === 'tool-call-delta' && call) call.arguments += part.argumentsDelta;
    if (part.type === 'tool-call-stop' && call && part.providerMetadata)
      call.providerMetadata = part.providerMetadata;
    if (part.type === 'reasoning-end') reasoning.push(part.reasoning);
  }
  return {
    role: 'assistant',
    content: textOf(parts),
    ...(calls.size > 0 ? { toolCalls: [...calls.values()] } : {}),
    ...(reasoning.length > 0 ? { reasoning } : {}),
  };
}
