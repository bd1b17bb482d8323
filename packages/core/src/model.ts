import type { JsonObject } from './json.js';
import type { UsageInit } from './usage.js';

/** A JSON Schema object, as sent to a model to describe a tool's input. */
export type JsonSchema = JsonObject;

/** One tool call as the model made it: `arguments` is the JSON text the model produced. */
export interface ModelToolCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
  /**
   * Data the provider attached to the call, keyed by provider name, sent back with it unchanged
   * next turn (Gemini's thought signatures arrive this way through the AI SDK).
   */
  readonly providerMetadata?: ProviderOptions;
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

/** Text in a user's message. */
export interface ModelTextPart {
  readonly type: 'text';
  readonly text: string;
}

/**
 * An image in a user's message: its bytes, base64 text, or a URL (`https:` for providers that
 * fetch it, `data:` for inline bytes). `mediaType` is required for bytes and base64.
 */
export interface ModelImagePart {
  readonly type: 'image';
  readonly data: Uint8Array | string | URL;
  /** Such as `image/png`; taken from a `data:` URL when not given. */
  readonly mediaType?: string;
}

/** A file in a user's message (a PDF, say): its bytes, base64 text, or a URL. */
export interface ModelFilePart {
  readonly type: 'file';
  readonly data: Uint8Array | string | URL;
  /** Such as `application/pdf`. */
  readonly mediaType: string;
  readonly filename?: string;
}

/** One part of a user's message. */
export type ModelUserContentPart = ModelTextPart | ModelImagePart | ModelFilePart;

/** A message the user sent: text, or parts (text, images, files). */
export interface ModelUserMessage {
  readonly role: 'user';
  readonly content: string | readonly ModelUserContentPart[];
}

/**
 * Reasoning a model produced, kept so it can go back to the same provider on the next turn:
 * Anthropic requires signed thinking blocks back unchanged, and OpenAI's reasoning items carry
 * encrypted content. Other providers receive nothing of it.
 */
export interface ModelReasoning {
  /** The reasoning text (or summary) as the provider streamed it; may be empty when redacted. */
  readonly text: string;
  /** The provider that produced it, such as `anthropic`; only that provider is sent it back. */
  readonly provider: string;
  /** The provider's signature over the text (Anthropic thinking blocks). */
  readonly signature?: string;
  /** Opaque reasoning the provider returned redacted or encrypted, sent back unchanged. */
  readonly redactedData?: string;
  /** The provider's id for the reasoning item (OpenAI Responses). */
  readonly id?: string;
  /**
   * Everything else the provider attached to the block, keyed by provider name, sent back
   * unchanged with it (the AI SDK's `providerMetadata`, such as `{ anthropic: { signature } }`).
   */
  readonly providerMetadata?: ProviderOptions;
}

/** A message the model produced earlier in the conversation, with the tool calls it made. */
export interface ModelAssistantMessage {
  readonly role: 'assistant';
  readonly content: string;
  readonly toolCalls?: readonly ModelToolCall[];
  /** The reasoning that preceded this answer, in order, for providers that need it back. */
  readonly reasoning?: readonly ModelReasoning[];
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

/**
 * Ask the model to answer with JSON matching `schema` (structured output). Providers use their
 * native JSON-schema mode where they have one; the agent validates the answer either way.
 */
export interface ModelOutputFormat {
  readonly type: 'json';
  readonly schema: JsonSchema;
  /** A name for the schema, for providers that want one. Default `output`. */
  readonly name?: string;
  readonly description?: string;
}

/** Sampling settings; a provider passes on those it supports and ignores the rest. */
export interface ModelSettings {
  readonly temperature?: number;
  readonly topP?: number;
  /** The most tokens the model may produce in one turn. */
  readonly maxOutputTokens?: number;
  readonly stopSequences?: readonly string[];
  readonly seed?: number;
}

/**
 * Options for one provider, keyed by its name: `{ openai: { reasoning: { effort: 'low' } } }`.
 * Each provider reads only its own key and passes it into its request body.
 */
export type ProviderOptions = Readonly<Record<string, JsonObject>>;

/** Everything a model needs for one turn. */
export interface ModelRequest {
  /** The system instructions. */
  readonly instructions: string;
  readonly messages: readonly ModelMessage[];
  readonly tools: readonly ModelToolDefinition[];
  /** When set, the answer must be JSON matching this format. */
  readonly output?: ModelOutputFormat;
  readonly settings?: ModelSettings;
  readonly providerOptions?: ProviderOptions;
}

/** Why the model stopped producing output. */
export type ModelFinishReason = 'stop' | 'tool-calls' | 'length' | 'content-filter' | 'error' | 'other';

/** Why a provider is about to retry a request, as its `retry` part reports it. */
export interface ModelRetryNotice {
  /** The attempt about to start: 2 for the first retry. */
  readonly attempt: number;
  /** How long the provider waits before it. */
  readonly delayMs: number;
  /** The error of the attempt that failed (a `ModelError` subclass). */
  readonly error: Error;
}

/**
 * One part of a model's streamed answer. Tool calls arrive as `tool-call-start` (id and name),
 * any number of `tool-call-delta` (pieces of the arguments' JSON text) and `tool-call-stop`,
 * matched by `index`; calls may interleave. Reasoning streams as `reasoning-delta`s, and each
 * block ends with `reasoning-end` carrying what must go back to the provider next turn. `retry`
 * parts come before anything else, one per retried attempt. A stream ends with one `finish`.
 */
export type ModelStreamPart =
  | { readonly type: 'text-delta'; readonly text: string }
  | { readonly type: 'reasoning-delta'; readonly text: string }
  | { readonly type: 'reasoning-end'; readonly reasoning: ModelReasoning }
  | { readonly type: 'tool-call-start'; readonly index: number; readonly id: string; readonly name: string }
  | { readonly type: 'tool-call-delta'; readonly index: number; readonly argumentsDelta: string }
  | {
      readonly type: 'tool-call-stop';
      readonly index: number;
      /** What goes back in the call's `providerMetadata`, when the provider attached anything. */
      readonly providerMetadata?: ProviderOptions;
    }
  | { readonly type: 'usage'; readonly usage: UsageInit }
  | {
      readonly type: 'response-metadata';
      /** The provider's id for this response. */
      readonly id?: string;
      /** The model that answered, as the provider names it (may differ from the one asked for). */
      readonly modelId?: string;
    }
  | ({ readonly type: 'retry' } & ModelRetryNotice)
  | {
      readonly type: 'finish';
      readonly reason: ModelFinishReason;
      /** The provider's own value, such as `end_turn` or `max_output_tokens`. */
      readonly rawReason?: string;
    };

/**
 * Bounds on one streamed answer, so a broken or hostile provider can neither stall a run nor make
 * it read without end. The agent passes its own with every call (`limits` of `defineAgent`, these
 * defaults unless set) and enforces them on the parts any model streams; Ghost's providers also
 * apply them where they read the wire, before the SDK buffers anything. A stream that crosses one
 * ends with a `ModelResponseError` (the idle timeout: a `ModelUnavailableError`) whose `limit`
 * names it. The defaults are far above what real models send.
 */
export interface ModelStreamLimits {
  /** Tool calls in one answer. Default 1,000. */
  readonly maxToolCallsPerAnswer: number;
  /** Bytes (UTF-8) of one tool call's arguments, their JSON text. Default 8 MiB. */
  readonly maxToolCallBytes: number;
  /**
   * Bytes of one answer. Ghost's providers count the response body as it arrives, event framing
   * included (a Chat Completions answer of 128,000 tokens is about 36 MB of it); the agent
   * counts the text, reasoning and tool-call arguments of any model's parts. Default 64 MiB.
   */
  readonly maxAnswerBytes: number;
  /**
   * Bytes of one event of a provider's stream: a server-sent event's lines up to the blank line
   * that ends it, so every line too. It must hold the largest event a provider sends, such as the
   * Responses API's `response.completed`, which repeats the whole answer and the instructions.
   * Default 16 MiB.
   */
  readonly maxStreamEventBytes: number;
  /**
   * Milliseconds a stream may go without a part. A provider that retries (all of Ghost's, through
   * `retryModelRequest`) gives up the attempt: before the answer's first part it is retried like a
   * lost connection, after it the turn fails. The agent gives up on any model one second after
   * this (plus the wait a `retry` part announced). Raise it for a model that thinks longer than
   * this without streaming; a value above 2,147,483,647 (about 24.8 days) turns it off.
   * Default 600,000 (10 minutes, as long as the official SDKs wait for a response to begin).
   */
  readonly streamIdleTimeoutMs: number;
}

/** The limits an agent applies to every model answer unless its `limits` say otherwise. */
export const defaultModelStreamLimits: ModelStreamLimits = Object.freeze({
  maxToolCallsPerAnswer: 1_000,
  maxToolCallBytes: 8 * 1024 * 1024,
  maxAnswerBytes: 64 * 1024 * 1024,
  maxStreamEventBytes: 16 * 1024 * 1024,
  streamIdleTimeoutMs: 600_000,
});

/** Options for one streamed model call. */
export interface ModelStreamOptions {
  /** Aborts on cancellation and deadline; a provider stops its request when it fires. */
  readonly signal: AbortSignal;
  /**
   * The bounds of this answer, which the agent always passes. A provider applies those it can
   * check before buffering (event sizes, the response's bytes, its own tables of tool calls) and
   * gives `streamIdleTimeoutMs` to `retryModelRequest`; left out, it uses
   * `defaultModelStreamLimits` (from `@ghost/core/provider`).
   */
  readonly limits?: ModelStreamLimits;
}

/**
 * The contract every model provider implements. A provider package exports a factory that
 * returns one of these; Ghost calls `stream` once per turn.
 *
 * A provider maps failures to the `ModelError` family (`ModelAuthenticationError`,
 * `ModelRateLimitError`, `ModelContextOverflowError`, `ModelContentFilterError`,
 * `ModelUnavailableError`, `ModelResponseError`), retries only before its first part with
 * `retryModelRequest` from `@ghost/core/provider` (so every retry is a visible `retry` part), and
 * stops its request at once when `options.signal` aborts. A stream that ends without `finish`
 * is a `ModelResponseError`, never a silent success. It reads its answer under `options.limits`
 * where it can check them before buffering (`limitServerSentEvents` for a server-sent event
 * body); the agent checks every part against them in any case.
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
