import type { ModelRequest, ModelStreamPart, ModelV1 } from '@ghost/core';

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
