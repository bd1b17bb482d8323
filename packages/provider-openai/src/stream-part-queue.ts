import type { ModelStreamPart } from '@ghost/core/provider';

/**
 * Parts a stream reader produced from one event, with the response's metadata held back until
 * the first other part. So a failure the provider reports right after opening (a Responses
 * `error` event before any output, say) comes before any part, and `retryModelRequest` may
 * still retry it.
 */
export class StreamPartQueue {
  #parts: ModelStreamPart[] = [];
  #id: string | undefined;
  #modelId: string | undefined;
  #isMetadataSent = false;

  /** Notes the response id and model, sent with the first part that follows. */
  noteMetadata(id: string | undefined, modelId: string | undefined): void {
    if (this.#isMetadataSent) return;
    if (id) this.#id = id;
    if (modelId) this.#modelId = modelId;
  }

  push(part: ModelStreamPart): void {
    if (!this.#isMetadataSent && (this.#id !== undefined || this.#modelId !== undefined)) {
      this.#isMetadataSent = true;
      this.#parts.push({
        type: 'response-metadata',
        ...(this.#id !== undefined ? { id: this.#id } : {}),
        ...(this.#modelId !== undefined ? { modelId: this.#modelId } : {}),
      });
    }
    this.#parts.push(part);
  }

  /** The parts pushed since the last call. */
  take(): ModelStreamPart[] {
    const parts = this.#parts;
    this.#parts = [];
    return parts;
  }
}
