import { AGUI_MEDIA_TYPE } from '@ag-ui/encoder';

/** How the events of one response are encoded. */
export type StreamMediaType = 'text/event-stream' | typeof AGUI_MEDIA_TYPE;

function qualityOf(parameters: readonly string[]): number {
  for (const parameter of parameters) {
    const [name, value] = parameter.split('=').map((part) => part.trim());
    if (name?.toLowerCase() === 'q') {
      const quality = Number(value);
      return Number.isFinite(quality) ? quality : 0;
    }
  }
  return 1;
}

/**
 * The encoding a request's `Accept` header asks for: server-sent events, unless the client names
 * AG-UI's protobuf media type and ranks it at least as high; `undefined` when the header allows
 * neither (the handler answers 406). No header, or a wildcard, means server-sent events.
 *
 * (`@ag-ui/encoder` picks protobuf for any Accept that allows it, `*\/*` included; browsers and
 * curl send `*\/*`, and expect text.)
 */
export function streamMediaTypeOf(accept: string | undefined): StreamMediaType | undefined {
  if (accept === undefined || accept.trim() === '') return 'text/event-stream';
  let eventStream = 0;
  let protobuf = 0;
  for (const range of accept.split(',')) {
    const [type = '', ...parameters] = range.split(';');
    const mediaType = type.trim().toLowerCase();
    const quality = qualityOf(parameters);
    if (mediaType === AGUI_MEDIA_TYPE) protobuf = Math.max(protobuf, quality);
    if (mediaType === 'text/event-stream' || mediaType === 'text/*' || mediaType === '*/*') {
      eventStream = Math.max(eventStream, quality);
    }
  }
  if (protobuf > 0 && protobuf >= eventStream) return AGUI_MEDIA_TYPE;
  if (eventStream > 0) return 'text/event-stream';
  return undefined;
}
