/**
 * For applications: spans following the OpenTelemetry GenAI conventions for every run, model
 * turn, tool call and code-mode program, on the application's `@opentelemetry/api` tracer.
 *
 * @example
 * ```ts
 * import { openTelemetry } from '@ghost/otel';
 * ```
 *
 * @packageDocumentation
 */

export { type OpenTelemetryOptions, openTelemetry } from './open-telemetry.js';
