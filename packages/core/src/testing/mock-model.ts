import type { ModelRequest, ModelStreamOptions, ModelStreamPart, ModelV1 } from '../model.js';

/** The behaviour of a {@link MockModel}: given a request, produce the stream parts. */
export type MockModelStream = (
  request: ModelRequest,
  options: ModelStreamOptions,
  callIndex: number,
) => AsyncIterable<ModelStreamPart> | Iterable<ModelStreamPart>;

/**
 * A model whose behaviour is a function you write, for cases a script cannot express (a model
 * that fails, ignores its signal, or answers from the request). Records every request in `calls`.
 *
 * @example
 * ```ts
 * const model = new MockModel({
 *   stream: (request) => [
 *     { type: 'text-delta', text: `You said: ${request.messages.at(-1)?.content}` },
 *     { type: 'finish', reason: 'stop' },
 *   ],
 * });
 * ```
 */
export class MockModel implements ModelV1 {
  readonly specificationVersion = 'model-v1' as const;
  readonly provider: string;
  readonly modelId: string;
  /** Every request the model received, in order. */
  readonly calls: ModelRequest[] = [];
  readonly #stream: MockModelStream;

  constructor(options: { stream: MockModelStream; provider?: string; modelId?: string }) {
    this.#stream = options.stream;
    this.provider = options.provider ?? 'mock';
    this.modelId = options.modelId ?? 'mock-model';
  }

  async *stream(request: ModelRequest, options: ModelStreamOptions): AsyncGenerator<ModelStreamPart> {
    const callIndex = this.calls.length;
    this.calls.push(request);
    yield* this.#stream(request, options, callIndex);
  }
}
