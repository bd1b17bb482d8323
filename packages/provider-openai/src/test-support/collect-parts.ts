import type { ModelV1 } from '@ghost/core';
import type { ModelRequest, ModelStreamPart } from '@ghost/core/provider';

/** A request with only what a test cares about; the rest empty. */
export function requestOf(fields: Partial<ModelRequest> = {}): ModelRequest {
  return { instructions: '', messages: [{ role: 'user', content: 'hi' }], tools: [], ...fields };
}

/** Every part the model streams for `request`; rejects with what the stream threw. */
export async function collectParts(
  model: ModelV1,
  request: ModelRequest = requestOf(),
  signal: AbortSignal = new AbortController().signal,
): Promise<ModelStreamPart[]> {
  const parts: ModelStreamPart[] = [];
  for await (const part of model.stream(request, { signal })) parts.push(part);
  return parts;
}

/** What the stream yielded before it threw, and what it threw. */
export async function collectUntilError(
  model: ModelV1,
  request: ModelRequest = requestOf(),
  signal: AbortSignal = new AbortController().signal,
): Promise<{ parts: ModelStreamPart[]; error: unknown }> {
  const parts: ModelStreamPart[] = [];
  try {
    for await (const part of model.stream(request, { signal })) parts.push(part);
  } catch (error) {
    return { parts, error };
  }
  throw new Error(`the stream ended without an error after ${parts.length} parts`);
}

/** The text of the text deltas. */
export function textOf(parts: readonly ModelStreamPart[]): string {
  return parts.map((part) => (part.type === 'text-delta' ? part.text : '')).join('');
}
