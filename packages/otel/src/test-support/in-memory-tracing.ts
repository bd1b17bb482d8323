import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  type Span,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';

/** A real SDK tracer provider that keeps every span it started and every span that ended. */
export interface InMemoryTracing {
  readonly provider: BasicTracerProvider;
  /** Spans that ended, in the order they ended. */
  finished(): ReadableSpan[];
  /** Every span started, ended or not. */
  started(): readonly Span[];
}

/** Records spans as they start, so a test can prove none was left open. */
class StartedSpans implements SpanProcessor {
  readonly spans: Span[] = [];
  onStart(span: Span): void {
    this.spans.push(span);
  }
  onEnd(): void {}
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

export function inMemoryTracing(): InMemoryTracing {
  const exporter = new InMemorySpanExporter();
  const started = new StartedSpans();
  const provider = new BasicTracerProvider({ spanProcessors: [started, new SimpleSpanProcessor(exporter)] });
  return { provider, finished: () => exporter.getFinishedSpans(), started: () => started.spans };
}

/**
 * Registers the AsyncLocalStorage context manager, as the Node SDK does, so the active span
 * follows async work; returns the undo.
 */
export function useAsyncContext(): () => void {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  return () => context.disable();
}

/** The spans whose parent is `parent` (roots when `parent` is undefined), in start order. */
export function childrenOf(spans: readonly ReadableSpan[], parent: ReadableSpan | undefined): ReadableSpan[] {
  return spans
    .filter((span) =>
      parent === undefined
        ? span.parentSpanContext === undefined
        : span.parentSpanContext?.spanId === parent.spanContext().spanId,
    )
    .sort((left, right) => compareTime(left.startTime, right.startTime));
}

/** The span tree as indented names, children in start order: easy to compare whole. */
export function spanTree(spans: readonly ReadableSpan[]): string[] {
  const lines: string[] = [];
  const visit = (span: ReadableSpan, depth: number) => {
    lines.push(`${'  '.repeat(depth)}${span.name}`);
    for (const child of childrenOf(spans, span)) visit(child, depth + 1);
  };
  for (const root of childrenOf(spans, undefined)) visit(root, 0);
  return lines;
}

/** The one span with this name; fails the test when there is none or more than one. */
export function onlySpan(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const matching = spans.filter((span) => span.name === name);
  if (matching.length !== 1) {
    throw new Error(
      `Expected one span named '${name}', found ${matching.length}: ${spans.map((span) => span.name).join(', ')}`,
    );
  }
  return matching[0]!;
}

function compareTime(left: readonly [number, number], right: readonly [number, number]): number {
  return left[0] - right[0] || left[1] - right[1];
}
