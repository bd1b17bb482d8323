import type { ModelFinishReason, ModelStreamPart, UsageInit } from '@ghost/core/provider';
import { type ModelStreamLimits, modelStreamError, modelStreamLimitError } from '@ghost/core/provider';
import type OpenAI from 'openai';
import { type FailureContext, modelErrorFromStreamFailure } from './openai-failure.js';
import type { StreamEventReader } from './stream-attempt.js';
import { StreamPartQueue } from './stream-part-queue.js';
import { tokenCount, usageField } from './token-count.js';

type ResponsesEvent = OpenAI.Responses.ResponseStreamEvent;
type ResponseObject = OpenAI.Responses.Response;

interface OpenCall {
  readonly index: number;
  hasArguments: boolean;
  isStopped: boolean;
}

interface OpenReasoning {
  readonly id: string | undefined;
  text: string;
  /** The summary part or content part the last delta belonged to. */
  lastPart: number | undefined;
  isEnded: boolean;
}

/**
 * Normalised Responses usage. OpenAI's `input_tokens` already includes cached tokens, so it is
 * Ghost's `inputTokens` as it is; cached tokens are also reported apart as `cacheReadTokens`.
 */
function responsesUsage(usage: unknown): UsageInit | undefined {
  if (typeof usage !== 'object' || usage === null) return undefined;
  const input = usageField(usage, 'input_tokens_details');
  const output = usageField(usage, 'output_tokens_details');
  const counts: UsageInit = {
    inputTokens: tokenCount(usageField(usage, 'input_tokens')),
    outputTokens: tokenCount(usageField(usage, 'output_tokens')),
    cacheReadTokens: tokenCount(usageField(input, 'cached_tokens')),
    cacheWriteTokens: tokenCount(usageField(input, 'cache_write_tokens')),
    reasoningTokens: tokenCount(usageField(output, 'reasoning_tokens')),
    totalTokens: tokenCount(usageField(usage, 'total_tokens')),
  };
  const known = Object.entries(counts).filter(([, value]) => value !== undefined);
  return known.length === 0 ? undefined : (Object.fromEntries(known) as UsageInit);
}

function incompleteReason(reason: string | undefined): ModelFinishReason {
  if (reason === 'max_output_tokens') return 'length';
  if (reason === 'content_filter') return 'content-filter';
  return 'other';
}

/**
 * Turns Responses API stream events into Ghost's stream parts, one event at a time. Output
 * text and refusals stream as text; reasoning summaries and reasoning text as reasoning, each
 * reasoning item ending with a `reasoning-end` that carries its id and encrypted content for
 * the next turn; `function_call` items as tool calls indexed in the order they start, matched
 * by their output index so argument deltas of parallel calls may interleave (through maps, in
 * time linear in the stream; more calls than `maxToolCallsPerAnswer` end it with a
 * `ModelResponseError`).
 *
 * `response.completed` finishes with `stop` (or `tool-calls` when the model called tools),
 * `response.incomplete` with its `incomplete_details.reason` (`max_output_tokens` → `length`,
 * `content_filter` → `content-filter`), both keeping the raw value. `response.failed` and
 * `error` events throw the matching `ModelError`: a failed answer is never a finished one.
 */
export class ResponsesStreamReader implements StreamEventReader<ResponsesEvent> {
  readonly #context: FailureContext;
  readonly #limits: ModelStreamLimits;
  readonly #queue = new StreamPartQueue();
  readonly #calls = new Map<number, OpenCall>();
  readonly #callOutputIndexByItemId = new Map<string, number>();
  readonly #reasoning = new Map<number, OpenReasoning>();
  #isFinished = false;

  constructor(context: FailureContext, limits: ModelStreamLimits) {
    this.#context = context;
    this.#limits = limits;
  }

  /** True once a terminal event (`response.completed` or `response.incomplete`) was read. */
  get isFinished(): boolean {
    return this.#isFinished;
  }

  /** The parts one event produces; throws the matching `ModelError` for a failure event. */
  read(event: ResponsesEvent): ModelStreamPart[] {
    if (this.#isFinished) return [];
    switch (event.type) {
      case 'response.created':
      case 'response.in_progress':
      case 'response.queued':
        this.#queue.noteMetadata(event.response?.id, event.response?.model);
        break;
      case 'response.output_item.added':
        this.#itemAdded(event.item, event.output_index);
        break;
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        if (event.delta) this.#queue.push({ type: 'text-delta', text: event.delta });
        break;
      case 'response.reasoning_summary_text.delta':
        this.#reasoningDelta(event.output_index, event.summary_index, event.delta);
        break;
      case 'response.reasoning_text.delta':
        this.#reasoningDelta(event.output_index, event.content_index, event.delta);
        break;
      case 'response.function_call_arguments.delta':
        this.#argumentsDelta(event.output_index, event.item_id, event.delta);
        break;
      case 'response.function_call_arguments.done': {
        // Some servers send the arguments only here: pass them on if no delta carried them.
        const call = this.#call(event.output_index, event.item_id);
        if (call && !call.hasArguments)
          this.#argumentsDelta(event.output_index, event.item_id, event.arguments);
        break;
      }
      case 'response.output_item.done':
        this.#itemDone(event.item, event.output_index);
        break;
      case 'response.completed':
        this.#finish(event.response, this.#calls.size > 0 ? 'tool-calls' : 'stop', 'completed');
        break;
      case 'response.incomplete': {
        const reason = event.response?.incomplete_details?.reason ?? undefined;
        this.#finish(event.response, incompleteReason(reason), reason ?? 'incomplete');
        break;
      }
      case 'response.failed': {
        const error = event.response?.error;
        throw modelErrorFromStreamFailure(this.#context, {
          code: error?.code ?? 'failed',
          message: error?.message ?? 'the response failed without saying why',
        });
      }
      case 'error':
        throw modelErrorFromStreamFailure(this.#context, { code: event.code, message: event.message });
      default:
        break;
    }
    return this.#queue.take();
  }

  /** Throws a `ModelResponseError` when the stream ended before a terminal event. */
  end(): ModelStreamPart[] {
    if (!this.#isFinished) {
      throw modelStreamError(this.#context.provider, 'ended before the response completed');
    }
    return [];
  }

  #itemAdded(item: OpenAI.Responses.ResponseOutputItem | undefined, outputIndex: number): void {
    if (item?.type === 'function_call') this.#startCall(item, outputIndex);
    else if (item?.type === 'reasoning') this.#openReasoning(outputIndex, item.id);
  }

  #startCall(item: OpenAI.Responses.ResponseFunctionToolCall, outputIndex: number): OpenCall {
    const existing = this.#calls.get(outputIndex);
    if (existing) return existing;
    if (typeof item.call_id !== 'string' || typeof item.name !== 'string') {
      throw modelStreamError(this.#context.provider, 'sent a function call without a call_id or name');
    }
    const { maxToolCallsPerAnswer } = this.#limits;
    if (this.#calls.size >= maxToolCallsPerAnswer) {
      throw modelStreamLimitError(this.#context.provider, 'maxToolCallsPerAnswer', maxToolCallsPerAnswer);
    }
    const call: OpenCall = { index: this.#calls.size, hasArguments: false, isStopped: false };
    this.#calls.set(outputIndex, call);
    if (item.id) this.#callOutputIndexByItemId.set(item.id, outputIndex);
    this.#queue.push({ type: 'tool-call-start', index: call.index, id: item.call_id, name: item.name });
    if (item.arguments) this.#argumentsDelta(outputIndex, item.id, item.arguments);
    return call;
  }

  #call(outputIndex: number | undefined, itemId: string | undefined): OpenCall | undefined {
    const byIndex = outputIndex === undefined ? undefined : this.#calls.get(outputIndex);
    if (byIndex) return byIndex;
    const indexOfItem = itemId === undefined ? undefined : this.#callOutputIndexByItemId.get(itemId);
    return indexOfItem === undefined ? undefined : this.#calls.get(indexOfItem);
  }

  #argumentsDelta(
    outputIndex: number | undefined,
    itemId: string | undefined,
    delta: string | undefined,
  ): void {
    const call = this.#call(outputIndex, itemId);
    if (!call || call.isStopped) {
      throw modelStreamError(this.#context.provider, 'sent arguments for a function call it never started');
    }
    if (!delta) return;
    call.hasArguments = true;
    this.#queue.push({ type: 'tool-call-delta', index: call.index, argumentsDelta: delta });
  }

  #openReasoning(outputIndex: number, id: string | undefined): OpenReasoning {
    let reasoning = this.#reasoning.get(outputIndex);
    if (!reasoning) {
      reasoning = { id, text: '', lastPart: undefined, isEnded: false };
      this.#reasoning.set(outputIndex, reasoning);
    }
    return reasoning;
  }

  #reasoningDelta(outputIndex: number, part: number | undefined, delta: string | undefined): void {
    if (!delta) return;
    const reasoning = this.#openReasoning(outputIndex, undefined);
    // Summary parts are separate paragraphs: keep them apart in the text that goes back.
    const separator = reasoning.text !== '' && part !== reasoning.lastPart ? '\n\n' : '';
    reasoning.lastPart = part;
    reasoning.text += separator + delta;
    this.#queue.push({ type: 'reasoning-delta', text: separator + delta });
  }

  #itemDone(item: OpenAI.Responses.ResponseOutputItem | undefined, outputIndex: number): void {
    if (item?.type === 'function_call') {
      const call = this.#startCall(item, outputIndex);
      if (!call.hasArguments && item.arguments) this.#argumentsDelta(outputIndex, item.id, item.arguments);
      this.#stopCall(call);
    } else if (item?.type === 'reasoning') {
      const reasoning = this.#openReasoning(outputIndex, item.id);
      if (reasoning.text === '') reasoning.text = reasoningText(item);
      this.#endReasoning(reasoning, item.id, item.encrypted_content ?? undefined);
    }
  }

  #stopCall(call: OpenCall): void {
    if (call.isStopped) return;
    call.isStopped = true;
    this.#queue.push({ type: 'tool-call-stop', index: call.index });
  }

  #endReasoning(reasoning: OpenReasoning, id: string | undefined, encrypted: string | undefined): void {
    if (reasoning.isEnded) return;
    reasoning.isEnded = true;
    const itemId = id ?? reasoning.id;
    this.#queue.push({
      type: 'reasoning-end',
      reasoning: {
        text: reasoning.text,
        provider: this.#context.provider,
        ...(itemId ? { id: itemId } : {}),
        ...(encrypted ? { redactedData: encrypted } : {}),
      },
    });
  }

  #finish(response: ResponseObject | undefined, reason: ModelFinishReason, rawReason: string): void {
    this.#queue.noteMetadata(response?.id, response?.model);
    // A terminal event closes whatever its items left open.
    for (const call of this.#calls.values()) this.#stopCall(call);
    for (const reasoning of this.#reasoning.values()) this.#endReasoning(reasoning, undefined, undefined);
    const usage = responsesUsage(response?.usage);
    if (usage) this.#queue.push({ type: 'usage', usage });
    this.#queue.push({ type: 'finish', reason, rawReason });
    this.#isFinished = true;
  }
}

function reasoningText(item: OpenAI.Responses.ResponseReasoningItem): string {
  const summary = (item.summary ?? []).map((part) => part.text).filter((text) => text);
  if (summary.length > 0) return summary.join('\n\n');
  return (item.content ?? []).map((part) => part.text).join('');
}
