import { randomUUID } from 'node:crypto';
import type { ModelFinishReason, ModelStreamPart, UsageInit } from '@ghost/core/provider';
import { type ModelStreamLimits, modelStreamError, modelStreamLimitError } from '@ghost/core/provider';
import type OpenAI from 'openai';
import type { FailureContext } from './openai-failure.js';
import type { StreamEventReader } from './stream-attempt.js';
import { StreamPartQueue } from './stream-part-queue.js';
import { tokenCount, usageField } from './token-count.js';

type ChatChunk = OpenAI.Chat.ChatCompletionChunk;

interface ChatToolCall {
  /** Ghost's index for the call, in the order calls start. */
  readonly index: number;
  id: string | undefined;
  name: string | undefined;
  /** Argument text that arrived before the call's name did. */
  pendingArguments: string;
  /** The bytes of its arguments so far, sent or pending. */
  argumentBytes: number;
  isStarted: boolean;
}

/**
 * Normalised Chat Completions usage. `prompt_tokens` includes cached tokens, so it is Ghost's
 * `inputTokens` as it is; cached tokens are also reported apart as `cacheReadTokens`.
 */
function chatUsage(usage: unknown): UsageInit | undefined {
  if (typeof usage !== 'object' || usage === null) return undefined;
  const prompt = usageField(usage, 'prompt_tokens_details');
  const completion = usageField(usage, 'completion_tokens_details');
  const counts: UsageInit = {
    inputTokens: tokenCount(usageField(usage, 'prompt_tokens')),
    outputTokens: tokenCount(usageField(usage, 'completion_tokens')),
    cacheReadTokens: tokenCount(usageField(prompt, 'cached_tokens')),
    reasoningTokens: tokenCount(usageField(completion, 'reasoning_tokens')),
    totalTokens: tokenCount(usageField(usage, 'total_tokens')),
  };
  const known = Object.entries(counts).filter(([, value]) => value !== undefined);
  return known.length === 0 ? undefined : (Object.fromEntries(known) as UsageInit);
}

function finishReason(raw: string, hasToolCalls: boolean): ModelFinishReason {
  // Some servers (older Ollama among them) say `stop` after tool calls.
  if (hasToolCalls && (raw === 'stop' || raw === 'tool_calls' || raw === 'function_call'))
    return 'tool-calls';
  switch (raw) {
    case 'stop':
      return 'stop';
    case 'length':
      return 'length';
    case 'tool_calls':
    case 'function_call':
      return 'tool-calls';
    case 'content_filter':
      return 'content-filter';
    default:
      return 'other';
  }
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * Turns Chat Completions chunks into Ghost's stream parts. Reads the first choice; `content`
 * and `refusal` stream as text, `reasoning_content` or `reasoning` (sent by DeepSeek, vLLM,
 * llama.cpp, Ollama, OpenRouter) as reasoning; `tool_calls` fragments are matched by their
 * `index` (or, where a server leaves it out, by id) so parallel calls may interleave, and a call
 * without an id gets a generated one that stays the same for the whole conversation. Calls are
 * found through maps by index and by id, so reading them takes time linear in the stream. More
 * calls than `maxToolCallsPerAnswer`, or arguments past `maxToolCallBytes` (those waiting for
 * their call's name included), end the stream with a `ModelResponseError` naming the limit. Usage
 * is reported when the server sends it and left out when it does not. A stream that ends without
 * a `finish_reason` is a `ModelResponseError`.
 */
export class ChatStreamReader implements StreamEventReader<ChatChunk> {
  readonly #context: FailureContext;
  readonly #limits: ModelStreamLimits;
  readonly #queue = new StreamPartQueue();
  /** Every call, in the order it started (its `index`). */
  readonly #calls: ChatToolCall[] = [];
  /** Calls by the server's `index`, for fragments that carry one. */
  readonly #callsByServerIndex = new Map<number, ChatToolCall>();
  /** Calls by id, for fragments that carry an id and no index. */
  readonly #callsById = new Map<string, ChatToolCall>();
  #reasoning: string | undefined;
  #rawFinishReason: string | undefined;
  #usage: UsageInit | undefined;

  constructor(context: FailureContext, limits: ModelStreamLimits) {
    this.#context = context;
    this.#limits = limits;
  }

  /** Chat streams end with `data: [DONE]` after the usage chunk: read on until the stream ends. */
  get isFinished(): boolean {
    return false;
  }

  read(chunk: ChatChunk): ModelStreamPart[] {
    this.#queue.noteMetadata(text(chunk?.id), text(chunk?.model));
    const usage = chatUsage(chunk?.usage);
    if (usage) this.#usage = usage;
    const choice = Array.isArray(chunk?.choices)
      ? chunk.choices.find((each) => (each.index ?? 0) === 0)
      : undefined;
    if (choice) {
      const delta = (choice.delta ?? {}) as Record<string, unknown>;
      const reasoning = text(delta.reasoning_content) ?? text(delta.reasoning);
      if (reasoning !== undefined) {
        this.#reasoning = (this.#reasoning ?? '') + reasoning;
        this.#queue.push({ type: 'reasoning-delta', text: reasoning });
      }
      const content = text(delta.content) ?? text(delta.refusal);
      if (content !== undefined) {
        this.#endReasoning();
        this.#queue.push({ type: 'text-delta', text: content });
      }
      if (Array.isArray(delta.tool_calls)) {
        this.#endReasoning();
        for (const fragment of delta.tool_calls) this.#toolCallFragment(fragment);
      }
      const reason = text(choice.finish_reason);
      if (reason !== undefined) this.#rawFinishReason = reason;
    }
    return this.#queue.take();
  }

  end(): ModelStreamPart[] {
    if (this.#rawFinishReason === undefined) {
      throw modelStreamError(this.#context.provider, 'ended without a finish_reason');
    }
    this.#endReasoning();
    for (const call of this.#calls) {
      if (!call.isStarted) {
        throw modelStreamError(
          this.#context.provider,
          `sent tool call ${call.index} without a function name`,
        );
      }
      this.#queue.push({ type: 'tool-call-stop', index: call.index });
    }
    if (this.#usage) this.#queue.push({ type: 'usage', usage: this.#usage });
    this.#queue.push({
      type: 'finish',
      reason: finishReason(this.#rawFinishReason, this.#calls.length > 0),
      rawReason: this.#rawFinishReason,
    });
    return this.#queue.take();
  }

  #endReasoning(): void {
    if (this.#reasoning === undefined) return;
    this.#queue.push({
      type: 'reasoning-end',
      reasoning: { text: this.#reasoning, provider: this.#context.provider },
    });
    this.#reasoning = undefined;
  }

  #callFor(fragment: Record<string, unknown>): ChatToolCall {
    const { index, id } = fragment;
    if (typeof index === 'number' && Number.isInteger(index) && index >= 0) {
      let call = this.#callsByServerIndex.get(index);
      if (call === undefined) {
        call = this.#newCall();
        this.#callsByServerIndex.set(index, call);
      }
      return call;
    }
    // No index: a known id continues its call, a new id starts one; neither continues the latest.
    if (typeof id === 'string' && id !== '') return this.#callsById.get(id) ?? this.#newCall();
    return this.#calls.at(-1) ?? this.#newCall();
  }

  #newCall(): ChatToolCall {
    const { maxToolCallsPerAnswer } = this.#limits;
    if (this.#calls.length >= maxToolCallsPerAnswer) {
      throw modelStreamLimitError(this.#context.provider, 'maxToolCallsPerAnswer', maxToolCallsPerAnswer);
    }
    const call: ChatToolCall = {
      index: this.#calls.length,
      id: undefined,
      name: undefined,
      pendingArguments: '',
      argumentBytes: 0,
      isStarted: false,
    };
    this.#calls.push(call);
    return call;
  }

  #setId(call: ChatToolCall, id: string): string {
    call.id = id;
    // The first call to carry an id keeps it, as a later fragment with that id continues it.
    if (!this.#callsById.has(id)) this.#callsById.set(id, call);
    return id;
  }

  #toolCallFragment(fragment: unknown): void {
    if (typeof fragment !== 'object' || fragment === null) return;
    const record = fragment as Record<string, unknown>;
    const call = this.#callFor(record);
    const id = text(record.id);
    if (id !== undefined && call.id === undefined) this.#setId(call, id);
    const fn = (record.function ?? {}) as Record<string, unknown>;
    const name = text(fn.name);
    if (name !== undefined && call.name === undefined) call.name = name;
    const { arguments: rawArguments } = fn;
    // A few servers send the arguments as an object instead of JSON text.
    const argumentsDelta =
      typeof rawArguments === 'string'
        ? rawArguments
        : rawArguments !== undefined && rawArguments !== null
          ? JSON.stringify(rawArguments)
          : '';
    call.argumentBytes += Buffer.byteLength(argumentsDelta, 'utf8');
    if (call.argumentBytes > this.#limits.maxToolCallBytes) {
      throw modelStreamLimitError(this.#context.provider, 'maxToolCallBytes', this.#limits.maxToolCallBytes);
    }
    if (!call.isStarted) {
      call.pendingArguments += argumentsDelta;
      if (call.name === undefined) return;
      call.isStarted = true;
      const callId = call.id ?? this.#setId(call, `call_${randomUUID().replaceAll('-', '')}`);
      this.#queue.push({ type: 'tool-call-start', index: call.index, id: callId, name: call.name });
      if (call.pendingArguments !== '') {
        this.#queue.push({
          type: 'tool-call-delta',
          index: call.index,
          argumentsDelta: call.pendingArguments,
        });
      }
      call.pendingArguments = '';
      return;
    }
    if (argumentsDelta !== '') {
      this.#queue.push({ type: 'tool-call-delta', index: call.index, argumentsDelta });
    }
  }
}
