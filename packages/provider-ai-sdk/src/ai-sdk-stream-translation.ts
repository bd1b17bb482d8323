import type { ReadableStreamReadResult } from 'node:stream/web';
import type { JsonObject } from '@ghost/core';
import type { ModelStreamPart, ProviderOptions } from '@ghost/core/provider';
import { type ModelStreamLimits, modelStreamError, modelStreamLimitError } from '@ghost/core/provider';
import { type AISDKErrorContext, modelErrorFromAISDK } from './ai-sdk-error.js';
import { finishFromAISDK } from './ai-sdk-finish-reason.js';
import { usageFromAISDK } from './ai-sdk-usage.js';

/** What the translation needs besides the stream. */
export interface AISDKStreamContext extends AISDKErrorContext {
  /** The call's signal: a read that fails because it aborted ends with its reason. */
  readonly signal: AbortSignal;
  /** The call's limits: the translation counts the tool calls of the answer against them. */
  readonly limits: ModelStreamLimits;
}

/** The fields of the AI SDK's stream parts that Ghost reads, across `v2`, `v3` and `v4`. */
interface AISDKStreamPart {
  readonly type: string;
  readonly id?: unknown;
  readonly delta?: unknown;
  readonly toolName?: unknown;
  readonly toolCallId?: unknown;
  readonly input?: unknown;
  readonly inputEncoding?: unknown;
  readonly providerExecuted?: unknown;
  readonly providerMetadata?: unknown;
  readonly modelId?: unknown;
  readonly usage?: unknown;
  readonly finishReason?: unknown;
  readonly error?: unknown;
}

interface ReasoningBlock {
  text: string;
  providerMetadata: ProviderOptions | undefined;
}

interface ToolCallState {
  readonly index: number;
  /** The arguments' text Ghost has been given so far, as `tool-call-delta`s. */
  forwarded: string;
  /** `text` deltas concatenate to a raw string, not JSON: only the final `tool-call` input is sent. */
  readonly isTextEncoded: boolean;
  providerMetadata: ProviderOptions | undefined;
  stopped: boolean;
}

/**
 * Reads an AI SDK model's stream and yields Ghost's stream parts: text and reasoning deltas, a
 * `reasoning-end` per reasoning block with its text and provider metadata (merged over the
 * block's start, deltas and end, where providers put signatures and encrypted content), tool
 * calls by id as `tool-call-start`/`-delta`/`-stop` with an `index` in order of appearance (a
 * `tool-call` with no input parts before it still gets all three), response metadata, usage and
 * the finish. An `error` part, a read that fails, and a stream that ends without `finish` all
 * throw a `ModelError`. Whenever the reader stops (done, failed, or the consumer stopped early)
 * the stream is cancelled, which closes the provider's HTTP response.
 */
export async function* translateAISDKStream(
  stream: ReadableStream<unknown>,
  context: AISDKStreamContext,
): AsyncGenerator<ModelStreamPart> {
  const translation = new AISDKStreamTranslation(context);
  const reader = stream.getReader();
  try {
    for (;;) {
      let next: ReadableStreamReadResult<unknown>;
      try {
        next = await reader.read();
      } catch (error) {
        if (context.signal.aborted) throw context.signal.reason;
        throw brokenStreamError(error, context);
      }
      if (next.done) break;
      yield* translation.accept(next.value);
      if (translation.isFinished) return;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  throw modelStreamError(context.provider, 'ended without a finish part');
}

function brokenStreamError(error: unknown, context: AISDKStreamContext) {
  // AI SDK errors (an APICallError raised while reading) keep their own mapping.
  if (typeof error === 'object' && error !== null && Symbol.for('vercel.ai.error') in error) {
    return modelErrorFromAISDK(error, context);
  }
  const reason = error instanceof Error ? error.message : String(error);
  return modelStreamError(context.provider, `broke off (${reason})`, error);
}

/** The state of one stream's translation: open reasoning blocks and tool calls by id. */
class AISDKStreamTranslation {
  readonly #context: AISDKStreamContext;
  readonly #reasoning = new Map<string, ReasoningBlock>();
  readonly #toolCalls = new Map<string, ToolCallState>();
  /** Ids of tools the provider runs itself (web search, ...): Ghost neither runs nor shows them. */
  readonly #providerExecuted = new Set<string>();
  /** Every tool call of the answer, provider-executed ones included, against maxToolCallsPerAnswer. */
  #toolCallCount = 0;
  #isFinished = false;
  #hasAnswerBegun = false;
  #pendingMetadata: Extract<ModelStreamPart, { type: 'response-metadata' }> | undefined;

  constructor(context: AISDKStreamContext) {
    this.#context = context;
  }

  get isFinished(): boolean {
    return this.#isFinished;
  }

  /**
   * Ghost's parts for one AI SDK part. Response metadata waits for the answer's first part, so an
   * error the provider sends right after its metadata (Anthropic's `overloaded_error` after
   * `message_start`) still comes before any part, where Ghost may retry it.
   */
  *accept(value: unknown): Generator<ModelStreamPart> {
    for (const part of this.#translate(value)) {
      if (!this.#hasAnswerBegun) {
        if (part.type === 'response-metadata') {
          this.#pendingMetadata = { ...this.#pendingMetadata, ...part };
          continue;
        }
        this.#hasAnswerBegun = true;
        if (this.#pendingMetadata !== undefined) yield this.#pendingMetadata;
      }
      yield part;
    }
  }

  *#translate(value: unknown): Generator<ModelStreamPart> {
    if (typeof value !== 'object' || value === null) return;
    const part = value as AISDKStreamPart;
    switch (part.type) {
      case 'text-delta':
        if (typeof part.delta === 'string' && part.delta !== '')
          yield { type: 'text-delta', text: part.delta };
        return;
      case 'reasoning-start':
        this.#reasoningBlock(part);
        return;
      case 'reasoning-delta': {
        const block = this.#reasoningBlock(part);
        if (typeof part.delta === 'string' && part.delta !== '') {
          block.text += part.delta;
          yield { type: 'reasoning-delta', text: part.delta };
        }
        return;
      }
      case 'reasoning-end': {
        this.#reasoningBlock(part);
        yield* this.#endReasoning(String(part.id));
        return;
      }
      case 'tool-input-start':
        yield* this.#startToolInput(part);
        return;
      case 'tool-input-delta':
        yield* this.#toolInputDelta(part);
        return;
      case 'tool-call':
        yield* this.#toolCall(part);
        return;
      case 'response-metadata': {
        const id = typeof part.id === 'string' ? part.id : undefined;
        const modelId = typeof part.modelId === 'string' ? part.modelId : undefined;
        if (id !== undefined || modelId !== undefined) {
          yield {
            type: 'response-metadata',
            ...(id !== undefined ? { id } : {}),
            ...(modelId !== undefined ? { modelId } : {}),
          };
        }
        return;
      }
      case 'finish':
        yield* this.#finish(part);
        return;
      case 'error':
        throw modelErrorFromAISDK(part.error, this.#context);
      default:
        // stream-start (warnings), text-start/-end, tool-input-end (the `tool-call` follows), raw,
        // source, file, provider-executed tool results, approvals, and parts of later versions.
        return;
    }
  }

  #reasoningBlock(part: AISDKStreamPart): ReasoningBlock {
    const id = String(part.id);
    let block = this.#reasoning.get(id);
    if (block === undefined) {
      block = { text: '', providerMetadata: undefined };
      this.#reasoning.set(id, block);
    }
    block.providerMetadata = mergeMetadata(block.providerMetadata, part.providerMetadata);
    return block;
  }

  *#endReasoning(id: string): Generator<ModelStreamPart> {
    const block = this.#reasoning.get(id);
    if (block === undefined) return;
    this.#reasoning.delete(id);
    yield {
      type: 'reasoning-end',
      reasoning: {
        text: block.text,
        provider: this.#context.provider,
        ...(block.providerMetadata !== undefined ? { providerMetadata: block.providerMetadata } : {}),
      },
    };
  }

  /** Counts one more tool call of the answer; throws past `maxToolCallsPerAnswer`. */
  #countToolCall(): void {
    const { maxToolCallsPerAnswer } = this.#context.limits;
    if (this.#toolCallCount >= maxToolCallsPerAnswer) {
      throw modelStreamLimitError(this.#context.provider, 'maxToolCallsPerAnswer', maxToolCallsPerAnswer);
    }
    this.#toolCallCount += 1;
  }

  *#startToolInput(part: AISDKStreamPart): Generator<ModelStreamPart> {
    const id = String(part.id);
    if (part.providerExecuted === true) {
      if (!this.#providerExecuted.has(id)) this.#countToolCall();
      this.#providerExecuted.add(id);
      return;
    }
    if (this.#toolCalls.has(id)) return;
    this.#countToolCall();
    const call: ToolCallState = {
      index: this.#toolCalls.size,
      forwarded: '',
      isTextEncoded: part.inputEncoding === 'text',
      providerMetadata: mergeMetadata(undefined, part.providerMetadata),
      stopped: false,
    };
    this.#toolCalls.set(id, call);
    yield { type: 'tool-call-start', index: call.index, id, name: String(part.toolName) };
  }

  *#toolInputDelta(part: AISDKStreamPart): Generator<ModelStreamPart> {
    const call = this.#toolCalls.get(String(part.id));
    if (call === undefined || call.stopped || call.isTextEncoded) return;
    if (typeof part.delta !== 'string' || part.delta === '') return;
    call.forwarded += part.delta;
    yield { type: 'tool-call-delta', index: call.index, argumentsDelta: part.delta };
  }

  *#toolCall(part: AISDKStreamPart): Generator<ModelStreamPart> {
    const id = String(part.toolCallId);
    if (part.providerExecuted === true || this.#providerExecuted.has(id)) return;
    let call = this.#toolCalls.get(id);
    if (call === undefined) {
      this.#countToolCall();
      call = {
        index: this.#toolCalls.size,
        forwarded: '',
        isTextEncoded: false,
        providerMetadata: undefined,
        stopped: false,
      };
      this.#toolCalls.set(id, call);
      yield { type: 'tool-call-start', index: call.index, id, name: String(part.toolName) };
    }
    if (call.stopped) return;
    const input = typeof part.input === 'string' ? part.input : JSON.stringify(part.input ?? {});
    // The final input is the whole arguments text; send what the deltas have not. A provider that
    // streamed nothing (or streamed raw text) gets it all here. Deltas already sent cannot be taken
    // back, so when they disagree with the final input the deltas stand.
    if (input.startsWith(call.forwarded) && input.length > call.forwarded.length) {
      yield {
        type: 'tool-call-delta',
        index: call.index,
        argumentsDelta: input.slice(call.forwarded.length),
      };
      call.forwarded = input;
    }
    call.providerMetadata = mergeMetadata(call.providerMetadata, part.providerMetadata);
    yield* this.#stopToolCall(call);
  }

  *#stopToolCall(call: ToolCallState): Generator<ModelStreamPart> {
    call.stopped = true;
    yield {
      type: 'tool-call-stop',
      index: call.index,
      ...(call.providerMetadata !== undefined ? { providerMetadata: call.providerMetadata } : {}),
    };
  }

  *#finish(part: AISDKStreamPart): Generator<ModelStreamPart> {
    const finish = finishFromAISDK(part.finishReason);
    if (finish === undefined) {
      throw modelStreamError(this.#context.provider, 'ended before the provider signalled completion');
    }
    // Close what the provider left open, so every start has its stop before the finish.
    for (const id of [...this.#reasoning.keys()]) yield* this.#endReasoning(id);
    for (const call of this.#toolCalls.values()) if (!call.stopped) yield* this.#stopToolCall(call);
    const usage = usageFromAISDK(part.usage);
    if (usage !== undefined) yield { type: 'usage', usage };
    yield {
      type: 'finish',
      reason: finish.reason,
      ...(finish.rawReason !== undefined ? { rawReason: finish.rawReason } : {}),
    };
    this.#isFinished = true;
  }
}

/**
 * Merges provider metadata key by key: a later part's values for a provider replace earlier ones
 * (Anthropic sends the signature on a delta, OpenAI the final encrypted content on the end).
 */
function mergeMetadata(current: ProviderOptions | undefined, next: unknown): ProviderOptions | undefined {
  if (typeof next !== 'object' || next === null) return current;
  const merged: Record<string, JsonObject> = { ...current };
  for (const [provider, values] of Object.entries(next as Record<string, unknown>)) {
    if (typeof values !== 'object' || values === null || Array.isArray(values)) continue;
    merged[provider] = { ...merged[provider], ...withoutUndefined(values as Record<string, unknown>) };
  }
  return Object.keys(merged).length === 0 ? current : merged;
}

/** Metadata values the provider left `undefined` would vanish in JSON anyway; drop them now. */
function withoutUndefined(values: Record<string, unknown>): JsonObject {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as JsonObject;
}
