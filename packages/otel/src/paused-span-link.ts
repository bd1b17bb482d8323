import { isSpanContextValid, type Link, type SpanContext, TraceFlags } from '@opentelemetry/api';

/** What the tracer keeps with a paused run: its run span's ids, to link the resumed run to it. */
export function pausedSpanContext(span: SpanContext): Record<string, string> {
  return { traceId: span.traceId, spanId: span.spanId, traceFlags: String(span.traceFlags) };
}

/**
 * The link from a resumed run's span to the paused run's, from what {@link pausedSpanContext} kept;
 * `undefined` when it is not a valid span context (the pause was saved without tracing, or edited).
 */
export function resumedFromLink(kept: Readonly<Record<string, string>> | undefined): Link | undefined {
  if (kept === undefined) return undefined;
  const flags = Number(kept.traceFlags);
  const linked: SpanContext = {
    traceId: kept.traceId ?? '',
    spanId: kept.spanId ?? '',
    traceFlags: Number.isInteger(flags) && flags >= 0 && flags <= 255 ? flags : TraceFlags.NONE,
    isRemote: true,
  };
  return isSpanContextValid(linked)
    ? { context: linked, attributes: { 'ghost.link.kind': 'resumes' } }
    : undefined;
}
