import type { ContentPart } from '@ag-ui/core';
import type { Artifact } from '@ghost/core';
import type { ModelUserContentPart } from '@ghost/core/provider';
import { AgUiRequestError } from './ag-ui-request-error.js';

// AG-UI carries media as parts whose source is base64 data, a URL or a provider's file handle;
// Ghost carries user media as parts with bytes, base64 text or a URL, and tool media as artifacts.

function base64Of(data: Uint8Array | string): string {
  return typeof data === 'string'
    ? Buffer.from(data, 'utf8').toString('base64')
    : Buffer.from(data).toString('base64');
}

function isTextual(mediaType: string): boolean {
  return mediaType.startsWith('text/') || mediaType === 'application/json' || mediaType.endsWith('+json');
}

function mediaKind(mediaType: string): 'image' | 'audio' | 'video' | 'document' {
  if (mediaType.startsWith('image/')) return 'image';
  if (mediaType.startsWith('audio/')) return 'audio';
  if (mediaType.startsWith('video/')) return 'video';
  return 'document';
}

/** A tool result as AG-UI content: its text, then one part per artifact (when it has any). */
export function toolContentToAgUi(
  content: string,
  artifacts: readonly Artifact[] | undefined,
): string | ContentPart[] {
  if (artifacts === undefined || artifacts.length === 0) return content;
  const parts: ContentPart[] = [{ type: 'text', text: content }];
  for (const artifact of artifacts) {
    parts.push({
      type: mediaKind(artifact.mediaType),
      source: { type: 'data', value: base64Of(artifact.data), mimeType: artifact.mediaType },
      metadata: { name: artifact.name },
    });
  }
  return parts;
}

/** A tool message's AG-UI content as Ghost's text and artifacts (media parts with inline data). */
export function toolContentFromAgUi(
  content: string | readonly ContentPart[],
  where: string,
): { content: string; artifacts: Artifact[] } {
  if (typeof content === 'string') return { content, artifacts: [] };
  const texts: string[] = [];
  const artifacts: Artifact[] = [];
  for (const [index, part] of content.entries()) {
    if (part.type === 'text') {
      texts.push(part.text);
      continue;
    }
    if (part.source.type !== 'data') {
      throw new AgUiRequestError(
        `${where}.content[${index}] is a ${part.type} by ${part.source.type}; a tool result's media must be inline data (base64).`,
      );
    }
    const { value, mimeType } = part.source;
    const name = typeof part.metadata?.name === 'string' ? part.metadata.name : `${part.type}-${index}`;
    const bytes = Buffer.from(value, 'base64');
    artifacts.push({
      name,
      mediaType: mimeType,
      data: isTextual(mimeType) ? bytes.toString('utf8') : new Uint8Array(bytes),
    });
  }
  return { content: texts.join('\n'), artifacts };
}

function urlOf(value: string, where: string): URL {
  try {
    return new URL(value);
  } catch {
    throw new AgUiRequestError(
      `${where} has the URL ${JSON.stringify(value.slice(0, 100))}, which is not a valid URL.`,
    );
  }
}

/** A user message's AG-UI parts as Ghost parts: text, images, and everything else as files. */
export function userContentFromAgUi(content: readonly ContentPart[], where: string): ModelUserContentPart[] {
  if (content.length === 0)
    throw new AgUiRequestError(`${where}.content is an empty list of parts; send text or at least one part.`);
  const parts: ModelUserContentPart[] = [];
  for (const [index, part] of content.entries()) {
    const at = `${where}.content[${index}]`;
    if (part.type === 'text') {
      parts.push({ type: 'text', text: part.text });
      continue;
    }
    const { source } = part;
    if (source.type === 'file') {
      throw new AgUiRequestError(
        `${at} is a ${part.type} by provider file handle, which this agent cannot read; send the bytes (base64) or a URL.`,
      );
    }
    const data = source.type === 'data' ? source.value : urlOf(source.value, at);
    if (part.type === 'image') {
      parts.push({
        type: 'image',
        data,
        ...(source.mimeType === undefined ? {} : { mediaType: source.mimeType }),
      });
      continue;
    }
    if (source.mimeType === undefined) {
      throw new AgUiRequestError(
        `${at} is a ${part.type} without a mimeType; say what the file is (such as application/pdf).`,
      );
    }
    const filename = typeof part.metadata?.filename === 'string' ? part.metadata.filename : undefined;
    parts.push({
      type: 'file',
      data,
      mediaType: source.mimeType,
      ...(filename === undefined ? {} : { filename }),
    });
  }
  return parts;
}

/** A Ghost user message's content as AG-UI content. */
export function userContentToAgUi(content: string | readonly ModelUserContentPart[]): string | ContentPart[] {
  if (typeof content === 'string') return content;
  return content.map((part): ContentPart => {
    if (part.type === 'text') return { type: 'text', text: part.text };
    const { data } = part;
    const mimeType = part.mediaType;
    const source =
      data instanceof URL
        ? { type: 'url' as const, value: data.href, ...(mimeType === undefined ? {} : { mimeType }) }
        : {
            type: 'data' as const,
            // Ghost's string data is already base64.
            value: typeof data === 'string' ? data : base64Of(data),
            mimeType: mimeType ?? 'application/octet-stream',
          };
    if (part.type === 'image') return { type: 'image', source };
    return {
      type: mediaKind(part.mediaType),
      source,
      ...(part.filename === undefined ? {} : { metadata: { filename: part.filename } }),
    };
  });
}
