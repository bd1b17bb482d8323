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
  readonly maxOutputTokens?: number | undefined;
  readonly temperature?: number | undefined;
  readonly stopSequences?: readonly string[] | undefined;
  readonly topP?: number | undefined;
  readonly seed?: number | undefined;
  readonly responseFormat?: unknown;
  readonly tools?: readonly unknown[] | undefined;
  readonly abortSignal?: AbortSignal | undefined;
  readonly providerOptions?: unknown;
}

/** What `doStream` resolves to: the stream of parts (request and response details are not read). */
export interface AISDKStreamResult {
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
