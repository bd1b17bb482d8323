import { GhostError, type GhostErrorInit, markErrorClass } from '../errors.js';
import type { ModelRequest, ModelStreamOptions, ModelStreamPart, ModelV1 } from '../model.js';
import type { UsageInit } from '../usage.js';

/** One tool call a scripted step makes. */
export interface ScriptedToolCall {
  /** Default: `call_<step>_<index>`. */
  readonly id?: string;
  readonly name: string;
  /** The arguments: a value is sent as its JSON text; a string is sent as-is (to script malformed JSON). */
  readonly input: unknown;
}

/** What the scripted model answers to one model call. */
export interface ScriptedStep {
  /** Text to stream; an array streams as those chunks. */
  readonly text?: string | readonly string[];
  readonly reasoning?: string;
  readonly toolCalls?: readonly ScriptedToolCall[];
  readonly usage?: UsageInit;
  /** Waits this long before each part of the step, so tests can cancel or time out mid-stream. */
  readonly delayMs?: number;
  /**
   * Failed attempts before the step's answer, each streamed as a `retry` part (the provider
   * retrying), so tests see `model_retry` events. The delay is only reported, not waited.
   */
  readonly retries?: readonly { readonly error: Error; readonly delayMs?: number }[];
}

/** A scripted model was called more times than it has steps, or finished with steps left. */
export class ScriptedModelError extends GhostError {
  static {
    markErrorClass(ScriptedModelError, 'ScriptedModelError');
  }

  /** This error's stable code (see `docs/errors.md`); `switch` on it narrows. */
  declare readonly code: 'SCRIPTED_MODEL_MISMATCH';

  constructor(message: string, init: GhostErrorInit<'SCRIPTED_MODEL_MISMATCH'> = {}) {
    super(message, { ...init, code: 'SCRIPTED_MODEL_MISMATCH' });
  }
}

function delay(milliseconds: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, milliseconds);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * A model that answers from a script, one step per model call: for tests and demos without a
 * provider. It records every request in `calls`; a call past the last step fails the run with a
 * `ScriptedModelError`, and `assertConsumed()` throws when steps are left.
 *
 * @example
 * ```ts
 * const model = new ScriptedModel([
 *   { toolCalls: [{ name: 'help_center_lookup', input: { topic: 'refunds' } }] },
 *   { text: 'Refunds take 5 business days.' },
 * ]);
 * const agent = defineAgent({ name: 'support', model, tools: [lookup] });
 * await agent.ask('How long do refunds take?');
 * model.assertConsumed();
 * ```
 */
export class ScriptedModel implements ModelV1 {
  readonly specificationVersion = 'model-v1' as const;
  readonly provider: string;
  readonly modelId: string;
  /** Every request the model received, in order. */
  readonly calls: ModelRequest[] = [];
  readonly #steps: readonly ScriptedStep[];

  constructor(steps: readonly ScriptedStep[], options: { provider?: string; modelId?: string } = {}) {
    this.#steps = steps;
    this.provider = options.provider ?? 'scripted';
    this.modelId = options.modelId ?? 'scripted-model';
  }

  /** How many steps have not been used yet. */
  get remainingSteps(): number {
    return Math.max(0, this.#steps.length - this.calls.length);
  }

  /** Throws when the script has steps the agent never asked for. */
  assertConsumed(): void {
    if (this.remainingSteps > 0) {
      throw new ScriptedModelError(
        `ScriptedModel has ${this.remainingSteps} unused step(s) of ${this.#steps.length}: the agent stopped calling the model early.`,
      );
    }
  }

  async *stream(request: ModelRequest, options: ModelStreamOptions): AsyncGenerator<ModelStreamPart> {
    const stepIndex = this.calls.length;
    this.calls.push(request);
    const step = this.#steps[stepIndex];
    if (!step) {
      throw new ScriptedModelError(
        `ScriptedModel was called ${stepIndex + 1} times but has only ${this.#steps.length} step(s): add a step, or check why the agent called the model again.`,
      );
    }
    const wait = () => (step.delayMs ? delay(step.delayMs, options.signal) : Promise.resolve());
    for (const [index, retry] of (step.retries ?? []).entries()) {
      yield { type: 'retry', attempt: index + 2, delayMs: retry.delayMs ?? 0, error: retry.error };
    }
    if (step.reasoning !== undefined) {
      await wait();
      yield { type: 'reasoning-delta', text: step.reasoning };
      yield { type: 'reasoning-end', reasoning: { text: step.reasoning, provider: this.provider } };
    }
    const chunks = typeof step.text === 'string' ? [step.text] : (step.text ?? []);
    for (const text of chunks) {
      await wait();
      yield { type: 'text-delta', text };
    }
    const toolCalls = step.toolCalls ?? [];
    for (const [index, call] of toolCalls.entries()) {
      await wait();
      const id = call.id ?? `call_${stepIndex + 1}_${index + 1}`;
      yield { type: 'tool-call-start', index, id, name: call.name };
      const argumentsText = typeof call.input === 'string' ? call.input : JSON.stringify(call.input ?? {});
      yield { type: 'tool-call-delta', index, argumentsDelta: argumentsText };
      yield { type: 'tool-call-stop', index };
    }
    if (step.usage) yield { type: 'usage', usage: step.usage };
    yield { type: 'finish', reason: toolCalls.length > 0 ? 'tool-calls' : 'stop' };
  }
}
