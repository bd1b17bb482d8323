import type Anthropic from '@anthropic-ai/sdk';
import type { ModelFinishReason, ModelStreamPart, UsageInit } from '@ghost/core/provider';
import { type ModelStreamLimits, modelStreamError, modelStreamLimitError } from '@ghost/core/provider';
import { providerName } from './anthropic-error-mapping.js';

const finishReasons: Readonly<Record<string, ModelFinishReason>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  // The answer filled what was left of the context window: cut short like max_tokens, and what
  // came before is valid, so the run can keep it.
  model_context_window_exceeded: 'length',
  tool_use: 'tool-calls',
  refusal: 'content-filter',
  // Server tools paused a long turn; sending the answer back continues it.
  pause_turn: 'other',
};

/**
 * Ghost's finish reason for Anthropic's `stop_reason`: `end_turn` and `stop_sequence` → `stop`,
 * `max_tokens` and `model_context_window_exceeded` → `length`, `tool_use` → `tool-calls`,
 * `refusal` → `content-filter`, `pause_turn` and anything new → `other`.
 */
function finishReasonOf(stopReason: string | null | undefined): ModelFinishReason {
  if (stopReason == null || !Object.hasOwn(finishReasons, stopReason)) return 'other';
  return finishReasons[stopReason] as ModelFinishReason;
}

type Block =
  | { readonly kind: 'text' }
  | { readonly kind: 'thinking'; text: string; signature: string | undefined }
  | { readonly kind: 'redacted'; readonly data: string }
  | { readonly kind: 'tool'; hasArguments: boolean; readonly initialInput: unknown }
  | { readonly kind: 'other' };

/** Token counts as Anthropic reports them; `null` and absent both mean "not reported". */
interface AnthropicCounts {
  input: number | undefined;
  cacheRead: number | undefined;
  cacheWrite: number | undefined;
  output: number | undefined;
  thinking: number | undefined;
}

type ReportedUsage = Partial<Anthropic.Usage> | Partial<Anthropic.MessageDeltaUsage> | undefined;

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function broken(problem: string): Error {
  return modelStreamError(providerName, problem);
}

/**
 * Turns Anthropic's streamed Messages events into Ghost's stream parts, one event at a time.
 *
 * - `message_start` gives the response id and model (a `response-metadata` part) and the input
 *   usage. The metadata is held back until the first content part, so an `error` event that comes
 *   before any content (such as `overloaded_error`) can still be retried.
 * - `text_delta` → `text-delta`; `thinking_delta` → `reasoning-delta`; `signature_delta` is kept,
 *   and each thinking block ends with a `reasoning-end` carrying its text and signature. A
 *   `redacted_thinking` block ends with a `reasoning-end` carrying its `data` as `redactedData`.
 * - `tool_use` blocks → `tool-call-start` (id, name), `input_json_delta.partial_json` →
 *   `tool-call-delta`, `content_block_stop` → `tool-call-stop`, all with the block's index. More
 *   than `maxToolCallsPerAnswer` of them end the answer with a `ModelResponseError`.
 * - `message_delta` carries the stop reason and cumulative usage; `message_stop` yields one
 *   `usage` part and the `finish` part.
 *
 * Usage: Anthropic's `input_tokens` excludes the tokens read from and written to the prompt
 * cache, so Ghost's `inputTokens` is `input_tokens + cache_read_input_tokens +
 * cache_creation_input_tokens` (all the input, as for every provider), with `cacheReadTokens` and
 * `cacheWriteTokens` the two cache counts, `outputTokens` the final cumulative `output_tokens` and
 * `reasoningTokens` its thinking share when reported. A count not reported is `undefined`.
 */
export class AnthropicStreamMapper {
  readonly #limits: ModelStreamLimits;
  readonly #blocks = new Map<number, Block>();
  #toolCalls = 0;
  readonly #counts: AnthropicCounts = {
    input: undefined,
    cacheRead: undefined,
    cacheWrite: undefined,
    output: undefined,
    thinking: undefined,
  };
  #metadata: ModelStreamPart | undefined;
  #hasStarted = false;
  #hasContent = false;
  #stopReason: string | undefined;
  #isFinished = false;

  constructor(limits: ModelStreamLimits) {
    this.#limits = limits;
  }

  /** True once `message_stop` arrived: the answer is complete. */
  get isFinished(): boolean {
    return this.#isFinished;
  }

  /** True once a part has been produced, after which nothing may be retried. */
  get hasContent(): boolean {
    return this.#hasContent;
  }

  /** The parts for one event, in order; throws a `ModelResponseError` for an event out of order. */
  push(event: Anthropic.RawMessageStreamEvent): ModelStreamPart[] {
    if (!isRecord(event) || typeof event.type !== 'string') throw broken('sent an event without a type');
    if (this.#isFinished) return [];
    if (event.type === 'message_start') return this.#start(event);
    if (!this.#hasStarted) throw broken(`sent ${event.type} before message_start`);
    switch (event.type) {
      case 'content_block_start':
        return this.#withMetadata(this.#startBlock(event));
      case 'content_block_delta':
        return this.#withMetadata(this.#delta(event));
      case 'content_block_stop':
        return this.#withMetadata(this.#stopBlock(event.index));
      case 'message_delta':
        this.#stopReason = event.delta?.stop_reason ?? this.#stopReason;
        this.#readUsage(event.usage);
        return [];
      case 'message_stop':
        return this.#finish();
      default:
        // Event types newer than this provider (and `ping`, should one get past the SDK) carry
        // nothing Ghost reads.
        return [];
    }
  }

  #start(event: Anthropic.RawMessageStartEvent): ModelStreamPart[] {
    if (this.#hasStarted) throw broken('sent a second message_start');
    const message: Partial<Anthropic.Message> = isRecord(event.message) ? event.message : {};
    this.#hasStarted = true;
    this.#metadata = {
      type: 'response-metadata',
      ...(typeof message.id === 'string' ? { id: message.id } : {}),
      ...(typeof message.model === 'string' ? { modelId: message.model } : {}),
    };
    this.#readUsage(message.usage);
    return [];
  }

  #withMetadata(parts: ModelStreamPart[]): ModelStreamPart[] {
    if (parts.length === 0 || this.#hasContent) return parts;
    this.#hasContent = true;
    return this.#metadata === undefined ? parts : [this.#metadata, ...parts];
  }

  #startBlock(event: Anthropic.RawContentBlockStartEvent): ModelStreamPart[] {
    const { index } = event;
    const block: unknown = event.content_block;
    if (typeof index !== 'number' || !isRecord(block))
      throw broken('sent a content_block_start without a block');
    if (this.#blocks.has(index)) throw broken(`started content block ${index} twice`);
    switch (block.type) {
      case 'text': {
        this.#blocks.set(index, { kind: 'text' });
        return typeof block.text === 'string' && block.text !== ''
          ? [{ type: 'text-delta', text: block.text }]
          : [];
      }
      case 'thinking': {
        const text = typeof block.thinking === 'string' ? block.thinking : '';
        const signature =
          typeof block.signature === 'string' && block.signature !== '' ? block.signature : undefined;
        this.#blocks.set(index, { kind: 'thinking', text, signature });
        return text === '' ? [] : [{ type: 'reasoning-delta', text }];
      }
      case 'redacted_thinking': {
        if (typeof block.data !== 'string') throw broken('sent a redacted_thinking block without data');
        this.#blocks.set(index, { kind: 'redacted', data: block.data });
        return [];
      }
      case 'tool_use': {
        if (typeof block.id !== 'string' || typeof block.name !== 'string') {
          throw broken('sent a tool_use block without an id or name');
        }
        const { maxToolCallsPerAnswer } = this.#limits;
        if (this.#toolCalls >= maxToolCallsPerAnswer) {
          throw modelStreamLimitError(providerName, 'maxToolCallsPerAnswer', maxToolCallsPerAnswer);
        }
        this.#toolCalls += 1;
        this.#blocks.set(index, { kind: 'tool', hasArguments: false, initialInput: block.input });
        return [{ type: 'tool-call-start', index, id: block.id, name: block.name }];
      }
      default:
        // Server tools and their results run at Anthropic; Ghost neither calls nor shows them.
        this.#blocks.set(index, { kind: 'other' });
        return [];
    }
  }

  #delta(event: Anthropic.RawContentBlockDeltaEvent): ModelStreamPart[] {
    const block = this.#blocks.get(event.index);
    if (block === undefined)
      throw broken(`sent a delta for content block ${event.index}, which never started`);
    const delta: Record<string, unknown> = isRecord(event.delta) ? event.delta : {};
    switch (delta.type) {
      case 'text_delta':
        if (block.kind !== 'text' || typeof delta.text !== 'string')
          throw this.#misplaced(delta.type, event.index);
        return delta.text === '' ? [] : [{ type: 'text-delta', text: delta.text }];
      case 'thinking_delta':
        if (block.kind !== 'thinking' || typeof delta.thinking !== 'string') {
          throw this.#misplaced(delta.type, event.index);
        }
        block.text += delta.thinking;
        return delta.thinking === '' ? [] : [{ type: 'reasoning-delta', text: delta.thinking }];
      case 'signature_delta':
        if (block.kind !== 'thinking' || typeof delta.signature !== 'string') {
          throw this.#misplaced(delta.type, event.index);
        }
        block.signature = delta.signature;
        return [];
      case 'input_json_delta':
        if (block.kind === 'other') return [];
        if (block.kind !== 'tool' || typeof delta.partial_json !== 'string') {
          throw this.#misplaced(delta.type, event.index);
        }
        if (delta.partial_json === '') return [];
        block.hasArguments = true;
        return [{ type: 'tool-call-delta', index: event.index, argumentsDelta: delta.partial_json }];
      default:
        // citations_delta and anything newer: nothing Ghost reads.
        return [];
    }
  }

  #misplaced(deltaType: unknown, index: number): Error {
    return broken(`sent a malformed ${String(deltaType)} for content block ${index}`);
  }

  #stopBlock(index: number): ModelStreamPart[] {
    const block = this.#blocks.get(index);
    if (block === undefined) throw broken(`stopped content block ${index}, which never started`);
    this.#blocks.delete(index);
    switch (block.kind) {
      case 'thinking':
        return [
          {
            type: 'reasoning-end',
            reasoning: {
              text: block.text,
              provider: providerName,
              ...(block.signature !== undefined ? { signature: block.signature } : {}),
            },
          },
        ];
      case 'redacted':
        return [
          {
            type: 'reasoning-end',
            reasoning: { text: '', provider: providerName, redactedData: block.data },
          },
        ];
      case 'tool': {
        const parts: ModelStreamPart[] = [];
        // A block that arrived whole (its input in content_block_start, no deltas) still has arguments.
        if (
          !block.hasArguments &&
          isRecord(block.initialInput) &&
          Object.keys(block.initialInput).length > 0
        ) {
          parts.push({ type: 'tool-call-delta', index, argumentsDelta: JSON.stringify(block.initialInput) });
        }
        parts.push({ type: 'tool-call-stop', index });
        return parts;
      }
      default:
        return [];
    }
  }

  #readUsage(usage: ReportedUsage): void {
    if (!isRecord(usage)) return;
    const counts = this.#counts;
    counts.input = count(usage.input_tokens) ?? counts.input;
    counts.cacheRead = count(usage.cache_read_input_tokens) ?? counts.cacheRead;
    counts.cacheWrite = count(usage.cache_creation_input_tokens) ?? counts.cacheWrite;
    counts.output = count(usage.output_tokens) ?? counts.output;
    const details: unknown = usage.output_tokens_details;
    if (isRecord(details)) counts.thinking = count(details.thinking_tokens) ?? counts.thinking;
  }

  #usage(): UsageInit | undefined {
    const { input, cacheRead, cacheWrite, output, thinking } = this.#counts;
    const usage: UsageInit = {};
    if (input !== undefined) usage.inputTokens = input + (cacheRead ?? 0) + (cacheWrite ?? 0);
    if (output !== undefined) usage.outputTokens = output;
    if (cacheRead !== undefined) usage.cacheReadTokens = cacheRead;
    if (cacheWrite !== undefined) usage.cacheWriteTokens = cacheWrite;
    if (thinking !== undefined) usage.reasoningTokens = thinking;
    return Object.keys(usage).length > 0 ? usage : undefined;
  }

  #finish(): ModelStreamPart[] {
    const parts: ModelStreamPart[] = [];
    // Blocks the stream never stopped are closed, so no tool call or signature is lost.
    for (const index of [...this.#blocks.keys()]) parts.push(...this.#stopBlock(index));
    const usage = this.#usage();
    if (usage !== undefined) parts.push({ type: 'usage', usage });
    parts.push({
      type: 'finish',
      reason: finishReasonOf(this.#stopReason),
      ...(this.#stopReason !== undefined ? { rawReason: this.#stopReason } : {}),
    });
    this.#isFinished = true;
    return this.#withMetadata(parts);
  }
}
