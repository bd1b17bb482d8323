import type Anthropic from '@anthropic-ai/sdk';
import type { Artifact } from '@ghost/core';
import type { ModelFilePart, ModelImagePart } from '@ghost/core/provider';
import { ModelError } from '@ghost/core/provider';

type ImageBlock = Anthropic.ImageBlockParam;
type DocumentBlock = Anthropic.DocumentBlockParam;
type TextBlock = Anthropic.TextBlockParam;

/** Where a part's bytes are: inline as base64 (with a media type), or at a URL Anthropic fetches. */
type Source =
  | { readonly kind: 'base64'; readonly data: string; readonly mediaType: string | undefined }
  | { readonly kind: 'url'; readonly url: string };

/** The image media types the Messages API reads. */
const imageMediaTypes = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

function unsupported(problem: string): ModelError {
  return new ModelError(`Anthropic cannot read this message part: ${problem}.`, {
    code: 'MODEL_INPUT_UNSUPPORTED',
    provider: 'anthropic',
  });
}

function base64Of(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/** Reads a `data:` URL: `data:image/png;base64,iVBOR...` or percent-encoded text. */
function fromDataUrl(href: string): Source {
  const comma = href.indexOf(',');
  if (comma === -1) throw unsupported('a data: URL without a comma before its data');
  const header = href.slice('data:'.length, comma);
  const payload = href.slice(comma + 1);
  const [mediaType, ...parameters] = header.split(';');
  const isBase64 = parameters.includes('base64');
  const data = isBase64 ? payload : Buffer.from(decodeURIComponent(payload), 'utf8').toString('base64');
  return { kind: 'base64', data, mediaType: mediaType === '' ? undefined : mediaType };
}

function fromUrl(url: URL): Source {
  if (url.protocol === 'data:') return fromDataUrl(url.href);
  if (url.protocol === 'https:' || url.protocol === 'http:') return { kind: 'url', url: url.href };
  throw unsupported(`a ${url.protocol} URL (give the bytes, base64 text, or an https: or data: URL)`);
}

/**
 * A part's data as a source. A string is base64 text, except that `https:`, `http:` and `data:`
 * URLs given as strings are read as URLs (base64 never contains a colon, so they cannot be confused).
 */
function sourceOf(data: Uint8Array | string | URL, mediaType: string | undefined): Source {
  if (data instanceof URL) return withMediaType(fromUrl(data), mediaType);
  if (typeof data === 'string') {
    if (/^(https?|data):/i.test(data)) return withMediaType(fromUrl(new URL(data)), mediaType);
    return { kind: 'base64', data, mediaType };
  }
  return { kind: 'base64', data: base64Of(data), mediaType };
}

function withMediaType(source: Source, mediaType: string | undefined): Source {
  if (source.kind === 'url' || mediaType === undefined) return source;
  return { ...source, mediaType };
}

/** An image part as an `image` block: base64 bytes, or a URL Anthropic fetches. */
export function imageBlock(part: Pick<ModelImagePart, 'data' | 'mediaType'>): ImageBlock {
  const source = sourceOf(part.data, part.mediaType);
  if (source.kind === 'url') return { type: 'image', source: { type: 'url', url: source.url } };
  const mediaType = source.mediaType;
  if (mediaType === undefined)
    throw unsupported('an image given as bytes or base64 needs its mediaType, such as image/png');
  if (!imageMediaTypes.has(mediaType)) {
    throw unsupported(`an image of type ${mediaType} (send image/jpeg, image/png, image/gif or image/webp)`);
  }
  return {
    type: 'image',
    source: {
      type: 'base64',
      data: source.data,
      media_type: mediaType as Anthropic.Base64ImageSource['media_type'],
    },
  };
}

/**
 * A file part: a PDF or plain text as a `document` block, an image as an `image` block. Other
 * types have no block in the Messages API, and fail before anything is sent.
 */
export function fileBlock(part: ModelFilePart): DocumentBlock | ImageBlock {
  const { mediaType } = part;
  if (mediaType.startsWith('image/')) return imageBlock(part);
  const title = part.filename === undefined ? {} : { title: part.filename };
  const source = sourceOf(part.data, mediaType);
  if (mediaType === 'application/pdf') {
    if (source.kind === 'url')
      return { type: 'document', source: { type: 'url', url: source.url }, ...title };
    return {
      type: 'document',
      source: { type: 'base64', data: source.data, media_type: 'application/pdf' },
      ...title,
    };
  }
  if (mediaType === 'text/plain') {
    if (source.kind === 'url') throw unsupported('a text/plain file given as an http(s) URL (give its text)');
    const text = Buffer.from(source.data, 'base64').toString('utf8');
    return { type: 'document', source: { type: 'text', data: text, media_type: 'text/plain' }, ...title };
  }
  throw unsupported(`a file of type ${mediaType} (send application/pdf, text/plain or an image)`);
}

function isTextual(mediaType: string): boolean {
  return mediaType.startsWith('text/') || mediaType === 'application/json' || mediaType.endsWith('+json');
}

/**
 * The blocks a tool's artifacts add to its `tool_result`: images and PDFs as themselves, text as
 * text, and a note for anything else, so the model knows an artifact exists that it cannot see.
 */
export function artifactBlocks(artifacts: readonly Artifact[]): (TextBlock | ImageBlock | DocumentBlock)[] {
  const blocks: (TextBlock | ImageBlock | DocumentBlock)[] = [];
  for (const artifact of artifacts) {
    const { name, mediaType, data } = artifact;
    if (isTextual(mediaType)) {
      const text = typeof data === 'string' ? data : Buffer.from(data).toString('utf8');
      blocks.push({ type: 'text', text: `${name}:\n${text}` });
    } else if (imageMediaTypes.has(mediaType) || mediaType === 'application/pdf') {
      // Binary media given as a string is taken as base64 text.
      const base64 = typeof data === 'string' ? data : base64Of(data);
      blocks.push(
        mediaType === 'application/pdf'
          ? {
              type: 'document',
              source: { type: 'base64', data: base64, media_type: 'application/pdf' },
              title: name,
            }
          : imageBlock({ data: base64, mediaType }),
      );
    } else {
      const size = typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength;
      blocks.push({
        type: 'text',
        text: `[${name} (${mediaType}, ${size} bytes) is not shown: Anthropic reads images, PDFs and text only]`,
      });
    }
  }
  return blocks;
}
