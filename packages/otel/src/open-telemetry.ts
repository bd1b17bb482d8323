import { ConfigurationError } from '@ghost/core';
import type { TelemetryV1 } from '@ghost/core/plugin';
import { type Tracer, type TracerProvider, trace } from '@opentelemetry/api';
import { RunTracer } from './run-tracer.js';

/** The options of {@link openTelemetry}. */
export interface OpenTelemetryOptions {
  /** The tracer to start spans with. Default: one named `@ghost/otel` from `tracerProvider`. */
  readonly tracer?: Tracer;
  /** Where to get the tracer. Default: the global provider (`trace.setGlobalTracerProvider`, or the NodeSDK's). */
  readonly tracerProvider?: TracerProvider;
  /**
   * Record what the model is sent and answers, tool arguments and results, and code mode's
   * program source on the spans. They may hold personal data and secrets, so they are off unless
   * this is `true`, or unset with the environment variable
   * `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`.
   */
  readonly captureContent?: boolean;
}

const optionNames: readonly string[] = ['tracer', 'tracerProvider', 'captureContent'];

/** The instrumentation scope of every span this package starts. */
const tracerName = '@ghost/otel';

/**
 * OpenTelemetry traces for Ghost runs, following the GenAI semantic conventions: an
 * `invoke_agent {agent}` span per run, `chat {model}` per model turn (with usage, finish reasons
 * and the response's id and model), and `execute_tool {tool}` per tool call. In code mode, the
 * calls a program makes are children of the `exec` (or `wait`) call that ran them, which carries
 * the engine and the sandbox. Each span is current while its work runs, so a tool's own spans (an
 * HTTP client's, a nested agent's run) nest beneath it. Uses only `@opentelemetry/api`: the
 * application brings the SDK and the exporter.
 *
 * @example
 * ```ts
 * import { NodeSDK } from '@opentelemetry/sdk-node';
 * import { ConsoleSpanExporter } from '@opentelemetry/sdk-trace-base';
 * import { createRuntime } from '@ghost/core';
 * import { openTelemetry } from '@ghost/otel';
 *
 * new NodeSDK({ traceExporter: new ConsoleSpanExporter() }).start();
 * const runtime = createRuntime({ telemetry: openTelemetry() });
 * ```
 */
export function openTelemetry(options: OpenTelemetryOptions = {}): TelemetryV1 {
  checkOptions(options);
  const captureContent =
    options.captureContent ?? process.env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT === 'true';
  // Without a provider given, the global one is asked per run, so a provider registered after
  // this plugin was made (the NodeSDK started later) still receives the spans.
  const tracerOf = (): Tracer =>
    options.tracer ?? (options.tracerProvider ?? trace.getTracerProvider()).getTracer(tracerName);
  const plugin: TelemetryV1 = {
    specificationVersion: 'telemetry-v1',
    name: 'opentelemetry',
    startRun: (start) => new RunTracer(tracerOf(), start, captureContent),
  };
  return Object.freeze(plugin);
}

function checkOptions(options: unknown): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw invalid('openTelemetry() takes an options object, such as { captureContent: true }, or nothing.');
  }
  const given = options as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (!optionNames.includes(key)) {
      throw invalid(`openTelemetry() has no option '${key}'. Its options are: ${optionNames.join(', ')}.`);
    }
  }
  const { tracer, tracerProvider, captureContent } = given;
  if (tracer !== undefined && typeof (tracer as Partial<Tracer> | null)?.startSpan !== 'function') {
    throw invalid(
      "openTelemetry()'s tracer must be an OpenTelemetry Tracer (with startSpan()), such as trace.getTracer('my-app').",
    );
  }
  if (
    tracerProvider !== undefined &&
    typeof (tracerProvider as Partial<TracerProvider> | null)?.getTracer !== 'function'
  ) {
    throw invalid(
      "openTelemetry()'s tracerProvider must be an OpenTelemetry TracerProvider (with getTracer()), such as the SDK's NodeTracerProvider.",
    );
  }
  if (tracer !== undefined && tracerProvider !== undefined) {
    throw invalid(
      'openTelemetry() takes a tracer or a tracerProvider, not both: the tracer already names its provider.',
    );
  }
  if (captureContent !== undefined && typeof captureContent !== 'boolean') {
    throw invalid("openTelemetry()'s captureContent must be true or false.");
  }
}

function invalid(message: string): ConfigurationError {
  return new ConfigurationError(message, { code: 'OTEL_OPTION_INVALID' });
}
