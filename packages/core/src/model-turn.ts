import { WaitWatchdog } from './abort-race.js';
import { GhostError, ModelError } from './errors.js';
import type {
  ModelReasoning,
  ModelRequest,
  ModelStreamLimits,
  ModelStreamPart,
  ModelToolCall,
  ModelV1,
  ProviderOptions,
} from './model.js';
import { modelStreamLimitError } from './model-error-mapping.js';
import { ModelContentFilterError, ModelResponseError } from './model-errors.js';
import { modelStreamIdleError } from './model-retry.js';
import type { RunExecution } from './run.js';
import { stopReason } from './run-context.js';
import { type EmitEvent, summarizeError } from './tool-call-runner.js';
import { Usage } from './usage.js';

/** One model turn's answer, once its stream has finished well. */
export interface TurnResult {
  readonly text: string;
  readonly toolCalls: readonly ModelToolCall[];
  readonly reasoning: readonly ModelReasoning[];
  readonly finishReason: string;
}

/**
 * How much longer than `streamIdleTimeoutMs` the agent waits for a part: a provider that retries
 * gives up a stalled attempt itself, and its `retry` part must reach the loop before the loop
 * gives up on the whole answer.
 */
const providerIdleGraceMs = 1_000;

type FinishPart = Extract<ModelStreamPart, { type: 'finish' }>;

interface StreamedToolCall {
  id: string;
  name: string;
  arguments: string;
  bytes: number;
  providerMetadata?: ProviderOptions;
}

/** Where one turn runs: the model, the turn's number, the run, and the answer's limits. */
interface TurnContext {
  readonly model: ModelV1;
  readonly turn: number;
  readonly execution: RunExecution;
  /** Tools whose calls the public stream omits (code mode's controls). */
  readonly hiddenToolNames: ReadonlySet<string>;
  readonly limits: ModelStreamLimits;
}

/**
 * Streams one model turn: emits its parts as events, bounds it by the answer's limits and the
 * idle timeout, and returns the finished answer.
 */
export async function streamTurn(
  request: ModelRequest,
  model: ModelV1,
  turn: number,
  execution: RunExecution,
  hiddenToolNames: ReadonlySet<string>,
  limits: ModelStreamLimits,
): Promise<TurnResult> {
  const { signal } = execution;
  const answer = new StreamedAnswer({ model, turn, execution, hiddenToolNames, limits });
  // The model's own signal: the run's, and the idle timeout's, which also stops its request.
  const watchdog = new WaitWatchdog(signal);
  const idleError = () => modelStreamIdleError(model.provider, limits.streamIdleTimeoutMs);
  let waitMs = limits.streamIdleTimeoutMs + providerIdleGraceMs;
  let iterator: AsyncIterator<ModelStreamPart> | undefined;
  try {
    iterator = model.stream(request, { signal: watchdog.signal, limits })[Symbol.asyncIterator]();
    for (;;) {
      watchdog.arm(waitMs, idleError);
      const step = await watchdog.race(iterator.next());
      watchdog.disarm();
      if (step.done) break;
      // A retry part adds the provider's wait before its next attempt.
      waitMs = limits.streamIdleTimeoutMs + providerIdleGraceMs + answer.accept(step.value);
    }
  } catch (error) {
    if (signal.aborted) throw stopReason(signal);
    if (GhostError.isInstance(error)) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new ModelError(`${answer.formatModel} failed on turn ${turn}: ${message}`, {
      cause: error,
    });
  } finally {
    watchdog.dispose();
    // A stream abandoned on abort or idleness is told to stop (its signal has aborted), but
    // never waited for.
    iterator?.return?.()?.catch(() => {});
  }
  return answer.finished();
}

/** The answer of one turn as its parts arrive: text, reasoning and tool calls, counted against the limits. */
class StreamedAnswer {
  readonly formatModel: string;
  readonly #context: TurnContext;
  readonly #hiddenIndexes = new Set<number>();
  readonly #calls = new Map<number, StreamedToolCall>();
  readonly #reasoning: ModelReasoning[] = [];
  // Every byte of text, reasoning and arguments counts once toward maxAnswerBytes; a reasoning
  // block's text counts where its deltas did not carry it.
  #answerBytes = 0;
  #unendedReasoningBytes = 0;
  #text = '';
  #finish: FinishPart | undefined;
  #responseId: string | undefined;
  #responseModelId: string | undefined;
  #hasOutput = false;

  constructor(context: TurnContext) {
    this.#context = context;
    this.formatModel = `Model ${context.model.provider}:${context.model.modelId}`;
  }

  /** Takes one part of the stream; returns how many milliseconds longer to wait for the next. */
  accept(part: ModelStreamPart): number {
    if (this.#finish !== undefined) {
      throw new ModelResponseError(
        `${this.formatModel} sent a '${part.type}' part after 'finish' on turn ${this.#context.turn}.`,
      );
    }
    if (part.type !== 'retry') this.#hasOutput = true;
    switch (part.type) {
      case 'retry':
        return this.#retry(part);
      case 'text-delta':
        this.#count(utf8Bytes(part.text));
        this.#text += part.text;
        this.#context.execution.noteText(this.#text);
        this.#emit('text_delta', { text: part.text });
        break;
      case 'reasoning-delta': {
        const bytes = utf8Bytes(part.text);
        this.#count(bytes);
        this.#unendedReasoningBytes += bytes;
        this.#emit('reasoning_delta', { text: part.text });
        break;
      }
      case 'reasoning-end':
        this.#reasoningEnd(part.reasoning);
        break;
      case 'tool-call-start':
        this.#toolCallStart(part);
        break;
      case 'tool-call-delta':
        this.#toolCallDelta(part);
        break;
      case 'tool-call-stop':
        this.#toolCallStop(part);
        break;
      case 'usage':
        this.#context.execution.addUsage(part.usage);
        this.#emit('usage', { usage: new Usage(part.usage) });
        break;
      case 'response-metadata':
        this.#responseId = part.id ?? this.#responseId;
        this.#responseModelId = part.modelId ?? this.#responseModelId;
        break;
      case 'finish':
        this.#finish = part;
        break;
    }
    return 0;
  }

  /** The answer once the stream has ended: it must have finished, and not on a filter or an error. */
  finished(): TurnResult {
    const { model, turn } = this.#context;
    const finish = this.#finish;
    if (finish === undefined) {
      throw new ModelResponseError(
        `${this.formatModel}'s stream ended on turn ${turn} without a 'finish' part, so its answer may be incomplete.`,
      );
    }
    const raw = finish.rawReason === undefined ? '' : ` (${finish.rawReason})`;
    if (finish.reason === 'content-filter') {
      throw new ModelContentFilterError(
        `${this.formatModel}'s answer was stopped by the provider's content filter on turn ${turn}${raw}.`,
        { provider: model.provider },
      );
    }
    if (finish.reason === 'error') {
      throw new ModelResponseError(`${this.formatModel} finished turn ${turn} with an error${raw}.`, {
        provider: model.provider,
      });
    }
    const toolCalls = [...this.#calls.entries()]
      .sort(([left], [right]) => left - right)
      .map(([, call]) => ({
        id: call.id,
        name: call.name,
        arguments: call.arguments,
        ...(call.providerMetadata !== undefined ? { providerMetadata: call.providerMetadata } : {}),
      }));
    const text = this.#text;
    this.#emit('model_stop', {
      turn,
      finishReason: finish.reason,
      ...(finish.rawReason !== undefined ? { rawFinishReason: finish.rawReason } : {}),
      ...(this.#responseId !== undefined ? { responseId: this.#responseId } : {}),
      ...(this.#responseModelId !== undefined ? { responseModelId: this.#responseModelId } : {}),
      text,
    });
    return { text, toolCalls, reasoning: this.#reasoning, finishReason: finish.reason };
  }

  // Control calls (code mode's exec/wait/stop) are bookkeeping: the public stream omits them,
  // telemetry keeps them.
  readonly #emit: EmitEvent = (type, data) => {
    const index = (data as { index?: unknown }).index;
    const isHidden =
      type.startsWith('tool_call_') && typeof index === 'number' && this.#hiddenIndexes.has(index);
    this.#context.execution.emit(type, data, isHidden ? { hidden: true } : {});
  };

  #tooLarge(limit: 'maxToolCallsPerAnswer' | 'maxToolCallBytes' | 'maxAnswerBytes'): GhostError {
    return modelStreamLimitError(this.#context.model.provider, limit, this.#context.limits[limit]);
  }

  #count(bytes: number): void {
    this.#answerBytes += bytes;
    if (this.#answerBytes > this.#context.limits.maxAnswerBytes) throw this.#tooLarge('maxAnswerBytes');
  }

  #retry(part: Extract<ModelStreamPart, { type: 'retry' }>): number {
    if (this.#hasOutput) {
      throw new ModelResponseError(
        `${this.formatModel} retried its request on turn ${this.#context.turn} after its answer had begun; a provider retries only before its first part.`,
      );
    }
    this.#emit('model_retry', {
      turn: this.#context.turn,
      attempt: part.attempt,
      delayMs: part.delayMs,
      error: summarizeError(part.error),
    });
    // The provider waits this long before its next attempt.
    return Math.max(0, part.delayMs);
  }

  #reasoningEnd(reasoning: ModelReasoning): void {
    const { signature = '', redactedData = '' } = reasoning;
    const textBytes = utf8Bytes(reasoning.text);
    this.#count(
      Math.max(0, textBytes - this.#unendedReasoningBytes) + utf8Bytes(signature) + utf8Bytes(redactedData),
    );
    this.#unendedReasoningBytes = Math.max(0, this.#unendedReasoningBytes - textBytes);
    this.#reasoning.push(reasoning);
  }

  #toolCallStart(part: Extract<ModelStreamPart, { type: 'tool-call-start' }>): void {
    if (!this.#calls.has(part.index) && this.#calls.size >= this.#context.limits.maxToolCallsPerAnswer) {
      throw this.#tooLarge('maxToolCallsPerAnswer');
    }
    this.#calls.set(part.index, { id: part.id, name: part.name, arguments: '', bytes: 0 });
    if (this.#context.hiddenToolNames.has(part.name)) this.#hiddenIndexes.add(part.index);
    this.#emit('tool_call_start', { index: part.index, toolCallId: part.id, toolName: part.name });
  }

  #toolCallDelta(part: Extract<ModelStreamPart, { type: 'tool-call-delta' }>): void {
    const call = this.#calls.get(part.index);
    if (!call)
      throw new ModelError(`The model sent arguments for tool call ${part.index}, which it never started.`);
    const bytes = utf8Bytes(part.argumentsDelta);
    call.bytes += bytes;
    if (call.bytes > this.#context.limits.maxToolCallBytes) throw this.#tooLarge('maxToolCallBytes');
    this.#count(bytes);
    call.arguments += part.argumentsDelta;
    this.#emit('tool_call_delta', {
      index: part.index,
      toolCallId: call.id,
      toolName: call.name,
      argumentsDelta: part.argumentsDelta,
    });
  }

  #toolCallStop(part: Extract<ModelStreamPart, { type: 'tool-call-stop' }>): void {
    const call = this.#calls.get(part.index);
    if (!call) throw new ModelError(`The model stopped tool call ${part.index}, which it never started.`);
    if (part.providerMetadata !== undefined) call.providerMetadata = part.providerMetadata;
    this.#emit('tool_call_stop', {
      index: part.index,
      toolCallId: call.id,
      toolName: call.name,
      arguments: call.arguments,
    });
  }
}

function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}
