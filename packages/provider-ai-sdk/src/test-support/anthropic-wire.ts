import type { ScriptedResponse, SseEvent } from './loopback-server.js';

// Anthropic's Messages streaming format, as its API reference documents it: named events
// (`event: message_start` ...) whose data carries the same `type`.

function event(type: string, fields: Record<string, unknown>): SseEvent {
  return { event: type, data: { type, ...fields } };
}

/** Builds one streamed Messages answer block by block. */
export class AnthropicEvents {
  readonly events: SseEvent[] = [];
  #index = 0;

  constructor(usage: Record<string, unknown>, id = 'msg_01Ghost', model = 'claude-sonnet-4-5-20250929') {
    this.events.push(
      event('message_start', {
        message: {
          id,
          type: 'message',
          role: 'assistant',
          content: [],
          model,
          stop_reason: null,
          stop_sequence: null,
          usage: { output_tokens: 1, ...usage },
        },
      }),
    );
  }

  /** A thinking block streamed in `pieces`, then its signature. */
  thinking(pieces: readonly string[], signature: string): this {
    const index = this.#index++;
    this.events.push(
      event('content_block_start', {
        index,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      }),
    );
    for (const thinking of pieces) {
      this.events.push(event('content_block_delta', { index, delta: { type: 'thinking_delta', thinking } }));
    }
    this.events.push(event('content_block_delta', { index, delta: { type: 'signature_delta', signature } }));
    this.events.push(event('content_block_stop', { index }));
    return this;
  }

  /** A redacted thinking block: its data arrives whole at the start. */
  redactedThinking(data: string): this {
    const index = this.#index++;
    this.events.push(
      event('content_block_start', { index, content_block: { type: 'redacted_thinking', data } }),
    );
    this.events.push(event('content_block_stop', { index }));
    return this;
  }

  text(pieces: readonly string[]): this {
    const index = this.#index++;
    this.events.push(event('content_block_start', { index, content_block: { type: 'text', text: '' } }));
    for (const text of pieces) {
      this.events.push(event('content_block_delta', { index, delta: { type: 'text_delta', text } }));
    }
    this.events.push(event('content_block_stop', { index }));
    return this;
  }

  /** A tool_use block whose input streams as `partial_json` pieces. */
  toolUse(id: string, name: string, pieces: readonly string[]): this {
    const index = this.#index++;
    this.events.push(
      event('content_block_start', { index, content_block: { type: 'tool_use', id, name, input: {} } }),
    );
    for (const partial_json of pieces) {
      this.events.push(
        event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } }),
      );
    }
    this.events.push(event('content_block_stop', { index }));
    return this;
  }

  /** `message_delta` with the stop reason and cumulative output tokens, then `message_stop`. */
  stop(stopReason: string, outputTokens: number): ScriptedResponse {
    this.events.push(
      event('message_delta', {
        delta: { stop_reason: stopReason, stop_sequence: null },
        usage: { output_tokens: outputTokens },
      }),
      event('message_stop', {}),
    );
    return { kind: 'sse', events: this.events };
  }
}

/** An Anthropic error body, as the Messages API answers a failed request. */
export function anthropicError(
  status: number,
  type: string,
  message: string,
  headers: Record<string, string> = {},
): ScriptedResponse {
  return {
    kind: 'json',
    status,
    headers: { 'request-id': `req_${status}`, ...headers },
    body: { type: 'error', error: { type, message } },
  };
}
