import type { Artifact } from './model.js';
import type { RunOutcome } from './run-outcome.js';
import type { Usage } from './usage.js';

/** How an error appears in events: safe to show, without a stack. */
export interface ErrorSummary {
  readonly name: string;
  readonly code: string | undefined;
  readonly message: string;
}

/** Fields every tool event carries. */
export interface ToolEventData {
  readonly toolCallId: string;
  readonly toolName: string;
  /**
   * The id of the tool call this one ran under, when a tool runs tools of its own: code mode's
   * brokered calls carry the id of the `exec` or `wait` that ran them, so traces nest.
   */
  readonly parentToolCallId?: string;
}

/** The `data` of each stream event type. */
export interface StreamEventDataMap {
  run_start: { readonly runId: string; readonly operationId: string; readonly agentName: string };
  invocation_start: { readonly invocationId: string; readonly agentName: string; readonly input: string };
  model_start: { readonly turn: number; readonly provider: string; readonly modelId: string };
  /**
   * The provider is retrying this turn's request after a retryable failure (a rate limit, an
   * unavailable model), `delayMs` from now; `attempt` is the attempt about to start (2 for the first retry).
   */
  model_retry: {
    readonly turn: number;
    readonly attempt: number;
    readonly delayMs: number;
    readonly error: ErrorSummary;
  };
  text_delta: { readonly text: string };
  reasoning_delta: { readonly text: string };
  tool_call_start: ToolEventData & { readonly index: number };
  tool_call_delta: ToolEventData & { readonly index: number; readonly argumentsDelta: string };
  tool_call_stop: ToolEventData & { readonly index: number; readonly arguments: string };
  tool_start: ToolEventData & { readonly input: unknown };
  tool_stop: ToolEventData & {
    readonly status: 'success' | 'error';
    /** What the model reads as the result. */
    readonly content: string;
    readonly value?: unknown;
    readonly error?: ErrorSummary;
    readonly artifacts?: readonly Artifact[];
    readonly durationMs: number;
  };
  /** Code mode started a program the model sent to `exec` (whose call is `toolCallId`). */
  program_start: {
    readonly toolCallId: string;
    readonly engine: string;
    readonly sandbox: string;
    readonly source: string;
  };
  /** A code-mode program reached a final status; `output` is what its last observation returned. */
  program_stop: {
    readonly toolCallId: string;
    readonly status: 'completed' | 'error' | 'terminated';
    readonly output: string;
    readonly value?: unknown;
    readonly error?: string;
  };
  usage: { readonly usage: Usage };
  model_stop: {
    readonly turn: number;
    /** Normalised: `stop`, `tool-calls`, `length` or `other`. */
    readonly finishReason: string;
    /** The provider's own finish value, such as `end_turn`, when it gave one. */
    readonly rawFinishReason?: string;
    /** The provider's id for the response, when it gave one. */
    readonly responseId?: string;
    /** The model that answered, as the provider names it, when it said. */
    readonly responseModelId?: string;
    readonly text: string;
  };
  invocation_stop: { readonly invocationId: string; readonly response: string };
  run_stop: { readonly outcome: 'completed'; readonly response: string; readonly usage: Usage };
  run_error: {
    readonly outcome: 'failed';
    readonly error: ErrorSummary;
    readonly cleanupFailed: boolean;
    readonly usage: Usage;
  };
  run_partial: {
    readonly outcome: 'partial';
    readonly response: string;
    readonly error: ErrorSummary;
    readonly usage: Usage;
  };
  run_cancel: { readonly outcome: 'cancelled'; readonly error: ErrorSummary; readonly usage: Usage };
}

/** The type names of stream events, as the spec names them. */
export type StreamEventType = keyof StreamEventDataMap;

/** The four events that end a run; exactly one of them is always the last event. */
export type TerminalStreamEventType = 'run_stop' | 'run_error' | 'run_partial' | 'run_cancel';

/**
 * One thing that happened during a run, as it happened. Events are frozen: consumers cannot
 * change the running work. Narrow on `type` to read `data`.
 *
 * @example
 * ```ts
 * for await (const event of agent.streamAsk('Where is my parcel?')) {
 *   if (event.type === 'text_delta') process.stdout.write(event.data.text);
 * }
 * ```
 */
export type StreamEvent = {
  [Type in StreamEventType]: {
    readonly type: Type;
    readonly data: StreamEventDataMap[Type];
    /** The id of the run that produced the event. */
    readonly runId: string;
    /** Milliseconds since the epoch. */
    readonly timestamp: number;
  };
}[StreamEventType];

/** The stream event of one `type`. */
export type StreamEventOf<Type extends StreamEventType> = Extract<StreamEvent, { type: Type }>;

/** Maps a run outcome to the terminal event that announces it. */
export const terminalEventTypes: Readonly<Record<RunOutcome, TerminalStreamEventType>> = Object.freeze({
  completed: 'run_stop',
  failed: 'run_error',
  partial: 'run_partial',
  cancelled: 'run_cancel',
});

function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  if (ArrayBuffer.isView(value)) return value; // typed arrays cannot be frozen; artifacts carry bytes
  Object.freeze(value);
  for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<PropertyKey, unknown>)[key]);
  return value;
}

/** Builds a frozen stream event. */
export function createStreamEvent<Type extends StreamEventType>(
  type: Type,
  data: StreamEventDataMap[Type],
  runId: string,
): StreamEventOf<Type> {
  return deepFreeze({ type, data, runId, timestamp: Date.now() }) as unknown as StreamEventOf<Type>;
}
