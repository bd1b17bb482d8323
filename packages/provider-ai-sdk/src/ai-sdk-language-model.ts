/**
 * The specification versions of the AI SDK's language model interface that `fromAISDK` speaks:
 * `v2` (`ai@5`, `@ai-sdk/*` 2.x), `v3` (`ai@6`, `@ai-sdk/*` 3.x) and `v4` (`ai@7`, `@ai-sdk/*` 4.x).
 */
export type AISDKSpecificationVersion = 'v2' | 'v3' | 'v4';

/**
 * What `fromAISDK` sends to `doStream`, described loosely enough that the call options of every
 * supported specification (`LanguageModelV2CallOptions`, `V3`, `V4`) fit it.
 */
export interface AISDKCallOptions {
  /** The conversation in the AI SDK's prompt format (system, user, assistant and tool messages). */
  readonly prompt: readonly unknown[];
  /** From the request's `settings.maxOutputTokens`. */
  readonly maxOutputTokens?: number | undefined;
  /** From the request's `settings.temperature`. */
  readonly temperature?: number | undefined;
  /** From the request's `settings.stopSequences`. */
  readonly stopSequences?: readonly string[] | undefined;
  /** From the request's `settings.topP`. */
  readonly topP?: number | undefined;
  /** From the request's `settings.seed`. */
  readonly seed?: number | undefined;
  /** `{ type: 'json', schema, name, description }` when the request has an `output` format. */
  readonly responseFormat?: unknown;
  /** The request's tools, as function tools with their JSON Schema. */
  readonly tools?: readonly unknown[] | undefined;
  /** The turn's signal: aborting it closes the HTTP stream. */
  readonly abortSignal?: AbortSignal | undefined;
  /** The request's `providerOptions`, unchanged (both are keyed by provider name). */
  readonly providerOptions?: unknown;
}

/** What `doStream` resolves to: the stream of parts (request and response details are not read). */
export interface AISDKStreamResult {
  /** The model's stream parts (`text-delta`, `tool-call`, `finish`, ...). */
  readonly stream: ReadableStream<unknown>;
}

/**
 * An AI SDK language model, as `fromAISDK` uses it: the models every `@ai-sdk/*` provider returns
 * (`openai('gpt-5')`, `anthropic('claude-sonnet-4-5')`, ...) fit this type, whatever their
 * specification version; `fromAISDK` checks the version when it wraps the model.
 *
 * Described here rather than imported from `@ai-sdk/provider`, because the three supported
 * specifications live in three majors of that package and an application has only one of them.
 */
export interface AISDKLanguageModel {
  /** `'v2'`, `'v3'` or `'v4'`; anything else is refused. */
  readonly specificationVersion: string;
  /** The provider's name for logs, such as `openai.responses`. */
  readonly provider: string;
  /** The provider's model id, such as `gpt-5`. */
  readonly modelId: string;
  /** Starts one streamed generation. The model does not retry; `fromAISDK` does. */
  doStream(options: AISDKCallOptions): PromiseLike<AISDKStreamResult>;
}
