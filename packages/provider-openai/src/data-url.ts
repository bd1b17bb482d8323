import { ConfigurationError } from '@ghost/core';

/** Bytes, base64 text or a URL, as a user's image or file part carries them. */
export type PartData = Uint8Array | string | URL;

/** A `data:` URL for bytes or base64 text. */
export function dataUrl(data: Uint8Array | string, mediaType: string): string {
  const base64 = typeof data === 'string' ? data : Buffer.from(data).toString('base64');
  return `data:${mediaType};base64,${base64}`;
}

/** Media whose artifacts carry text rather than base64 (`text/*`, JSON, XML, JavaScript). */
export function isTextualMediaType(mediaType: string): boolean {
  return /^text\/|[/+](json|xml)$|^application\/(javascript|ecmascript|x-yaml|yaml)$/i.test(mediaType);
}

/**
 * The URL to send for an image or file: URLs as they are (`https:` for the provider to fetch,
 * `data:` inline), bytes and base64 as a `data:` URL of their media type.
 */
export function partUrl(data: PartData, mediaType: string | undefined, what: string): string {
  if (data instanceof URL) return data.href;
  if (mediaType === undefined || mediaType === '') {
    throw new ConfigurationError(
      `The ${what} in a user message is given as ${typeof data === 'string' ? 'base64 text' : 'bytes'} without a mediaType: add one, such as 'image/png'.`,
      { code: 'MODEL_INPUT_INVALID' },
    );
  }
  return dataUrl(data, mediaType);
}

/** A name for a file part that has none, from its media type (`application/pdf` → `file.pdf`). */
export function defaultFilename(mediaType: string): string {
  const subtype = mediaType.split('/')[1]?.split(/[+;]/)[0];
  return subtype ? `file.${subtype}` : 'file';
}
