import type { ProgramResult } from '@ghost/code-mode';
import type { Artifact } from '@ghost/core';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

type ContentBlock = CallToolResult['content'][number];

function base64(data: Uint8Array | string): string {
  return Buffer.from(data).toString('base64');
}

/**
 * An artifact as MCP content: images and audio as themselves, anything else as an embedded
 * resource named after the artifact (text for textual media, base64 bytes otherwise).
 */
function artifactContent(artifact: Artifact): ContentBlock {
  const { mediaType, data } = artifact;
  if (mediaType.startsWith('image/')) return { type: 'image', data: base64(data), mimeType: mediaType };
  if (mediaType.startsWith('audio/')) return { type: 'audio', data: base64(data), mimeType: mediaType };
  const uri = `ghost-artifact:${encodeURIComponent(artifact.name)}`;
  if (typeof data === 'string')
    return { type: 'resource', resource: { uri, mimeType: mediaType, text: data } };
  return { type: 'resource', resource: { uri, mimeType: mediaType, blob: base64(data) } };
}

/**
 * What `exec`, `wait` and `stop` answer: the result `{ status, output, value?, error? }` as JSON
 * text (what the instructions tell the model it gets) and as `structuredContent`, the artifacts
 * of the tool calls beside it, and `isError` when the program failed.
 */
export function programResultContent(result: ProgramResult): CallToolResult {
  const { artifacts, ...rest } = result;
  const structured: Record<string, unknown> = { status: rest.status, output: rest.output };
  if (rest.value !== undefined) structured.value = rest.value;
  if (rest.error !== undefined) structured.error = rest.error;
  return {
    content: [{ type: 'text', text: JSON.stringify(structured) }, ...(artifacts ?? []).map(artifactContent)],
    structuredContent: structured,
    ...(result.status === 'error' ? { isError: true } : {}),
  };
}

/**
 * A control operation that could not run (another one in progress, `wait` with nothing running,
 * the source too large, the session closed): its message, for the model to read and recover.
 */
export function controlErrorContent(error: unknown): CallToolResult {
  const message = error instanceof Error ? error.message : String(error);
  return { content: [{ type: 'text', text: message }], isError: true };
}
