import type { JsonObject } from './json.js';
import type { UsageInit } from './usage.js';

/** A JSON Schema object, as sent to a model to describe a tool's input. */
export type JsonSchema = JsonObject;

/** One tool call as the model made it: `arguments` is the JSON text the model produced. */
export interface ModelToolCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
}

/** Something a tool returned besides its JSON value: an image, a document, a file. */
export interface Artifact {
  /** A file-like name, such as `chart.png`. */
  readonly name: string;
  /** The IANA media type, such as `image/png`. */
  readonly mediaType: string;
  /** The bytes, or text for textual media. */
  readonly data: Uint8Array | string;
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/** A message the user sent. */
export interface ModelUserMessage {
  readonly role: 'user';
  readonly content: string;
}

/** A message the model produced earlier in the conversation, with the tool calls it made. */
export interface ModelAssistantMessage {
  readonly role: 'assistant';
  readonly content: string;
  readonly toolCalls?: readonly ModelToolCall[];
}

/** The result of one tool call, answering the assistant message that made it. */
export interface ModelToolMessage {
  readonly role: 'tool';
  readonly toolCallId: string;
  readonly toolName: string;
  /** What the model reads: JSON text for structured values, the message for errors. */
  readonly content: string;
  /** True when `content` describes a failure the model may recover from. */
  readonly isError?: boolean;
  readonly artifacts?: readonly Artifact[];
}

/** One message of the conversation sent to a model. */
export type ModelMessage = ModelUserMessage | ModelAssistantMessage | ModelToolMessage;

/** A tool as the model sees it. */
export interface ModelToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
}

/** Everything a model needs for one turn. */
export interface ModelRequest {
  /** The system instructions. */
  readonly instructions: string;
  readonly messages: readonly ModelMessage[];
  readonly tools: readonly ModelToolDefinition[];
}

/** Why the model stopped producing output. */
export type ModelFinishReason = 'stop' | 'tool-calls' | 'length' | 'content-filter' | 'error' | 'other';

/**
 * One part of a model's streamed answer. Tool calls arrive as `tool-call-start` (id and name),
 * any number of `tool-call-delta` (pieces of the arguments' JSON text) and `tool-call-stop`,
 * matched by `index`. A stream ends with one `finish`.
 */
export type ModelStreamPart =
  | { readonly type: 'text-delta'; readonly text: string }
  | { readonly type: 'reasoning-delta'; readonly text: string }
  | { readonly type: 'tool-call-start'; readonly index: number; readonly id: string; readonly name: string }
  | { readonly type: 'tool-call-delta'; readonly index: number; readonly argumentsDelta: string }
  | { readonly type: 'tool-call-stop'; readonly index: number }
  | { readonly type: 'usage'; readonly usage: UsageInit }
  | { readonly type: 'finish'; readonly reason: ModelFinishReason };

/** Options for one streamed model call. */
export interface ModelStreamOptions {
  /** Aborts on cancellation and deadline; a provider stops its request when it fires. */
  readonly signal: AbortSignal;
}

/**
 * The contract every model provider implements. A provider package exports a factory that
 * returns one of these; Ghost calls `stream` once per turn.
 *
 * @example
 * ```ts
 * const echo: ModelV1 = {
 *   specificationVersion: 'model-v1',
 *   provider: 'example',
 *   modelId: 'echo',
 *   async *stream(request) {
 *     const last = request.messages.at(-1);
 *     yield { type: 'text-delta', text: last?.content ?? '' };
 *     yield { type: 'finish', reason: 'stop' };
 *   },
 * };
 * ```
 */
export interface ModelV1 {
  readonly specificationVersion: 'model-v1';
  /** The provider's name, such as `openai`. */
  readonly provider: string;
  /** The provider's model id, such as `gpt-5`. */
  readonly modelId: string;
  stream(request: ModelRequest, options: ModelStreamOptions): AsyncIterable<ModelStreamPart>;
}
