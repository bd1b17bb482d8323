import { type Artifact, ToolResult } from '@ghost/core';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { McpToolError } from './errors.js';

const extensions: Readonly<Record<string, string>> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'audio/wav': 'wav',
  'audio/mpeg': 'mp3',
  'text/plain': 'txt',
  'application/json': 'json',
};

function artifactName(toolName: string, index: number, mediaType: string): string {
  return `${toolName}-${index + 1}.${extensions[mediaType] ?? 'bin'}`;
}

function lastSegment(uri: string): string {
  const segment = uri
    .split(/[/?#]/)
    .filter((part) => part !== '')
    .pop();
  return segment ?? uri;
}

/**
 * Turns an MCP `tools/call` result into what a Ghost tool returns: `structuredContent` is the
 * value (what a program gets); otherwise the text blocks, joined, are. Images, audio and embedded
 * resources become artifacts that go to the model beside the value. `isError` throws a
 * `ToolError` with the server's text, which the model reads and a program can catch.
 */
export function toolResultOf(result: CallToolResult, toolName: string): ToolResult {
  const texts: string[] = [];
  const artifacts: Artifact[] = [];
  for (const [index, block] of (result.content ?? []).entries()) {
    switch (block.type) {
      case 'text':
        texts.push(block.text);
        break;
      case 'image':
      case 'audio':
        artifacts.push({
          name: artifactName(toolName, index, block.mimeType),
          mediaType: block.mimeType,
          data: Buffer.from(block.data, 'base64'),
        });
        break;
      case 'resource': {
        const { resource } = block;
        const mediaType =
          resource.mimeType ?? ('text' in resource ? 'text/plain' : 'application/octet-stream');
        artifacts.push({
          name: lastSegment(resource.uri),
          mediaType,
          data: 'text' in resource ? resource.text : Buffer.from(resource.blob, 'base64'),
          metadata: { uri: resource.uri },
        });
        break;
      }
      case 'resource_link':
        texts.push(`Resource ${block.name}: ${block.uri}`);
        break;
    }
  }
  const text = texts.join('\n');
  if (result.isError === true) {
    throw new McpToolError(text === '' ? `The MCP tool '${toolName}' failed without saying why.` : text, {
      tool: toolName,
    });
  }
  const value = result.structuredContent ?? text;
  return new ToolResult({ value, artifacts });
}
