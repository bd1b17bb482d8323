import type { ScriptedResponse, SseEvent } from './loopback-server.js';

// OpenAI's wire formats, as its API reference documents them: Chat Completions chunks (`data:`
// lines ending with `[DONE]`) and Responses events (`event:` + `data:` with `type` and
// `sequence_number`).

const chatBase = {
  id: 'chatcmpl-ghost1',
  object: 'chat.completion.chunk',
  created: 1764806400,
  model: 'gpt-4.1-2025-04-14',
  system_fingerprint: 'fp_ghost',
  service_tier: 'default',
};

/** A Chat Completions chunk with one choice's `delta` (and its `finish_reason`, once it has one). */
export function chatDelta(delta: Record<string, unknown>, finishReason: string | null = null): SseEvent {
  return {
    data: { ...chatBase, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] },
  };
}

/** The last chunk of a stream asked with `stream_options.include_usage`: no choices, the usage. */
export function chatUsage(usage: Record<string, unknown>): SseEvent {
  return { data: { ...chatBase, choices: [], usage } };
}

export const chatDone: SseEvent = { data: '[DONE]' };

/** A whole streamed Chat Completions answer of text pieces. */
export function chatTextStream(
  pieces: readonly string[],
  finishReason = 'stop',
  usage: Record<string, unknown> = { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
): ScriptedResponse {
  return {
    kind: 'sse',
    events: [
      chatDelta({ role: 'assistant', content: '', refusal: null }),
      ...pieces.map((piece) => chatDelta({ content: piece })),
      chatDelta({}, finishReason),
      chatUsage(usage),
      chatDone,
    ],
  };
}

/** An OpenAI error body, as every OpenAI endpoint answers a failed request. */
export function openaiError(
  status: number,
  error: { message: string; type: string; code?: string | null; param?: string | null },
  headers: Record<string, string> = {},
): ScriptedResponse {
  return {
    kind: 'json',
    status,
    headers: { 'x-request-id': `req_${status}`, ...headers },
    body: { error: { param: null, code: null, ...error } },
  };
}

/** Numbers Responses events in order, as the API does with `sequence_number`. */
export class ResponsesEvents {
  readonly events: SseEvent[] = [];
  readonly #responseId: string;
  readonly #model: string;

  constructor(responseId = 'resp_ghost1', model = 'gpt-5-2025-08-07') {
    this.#responseId = responseId;
    this.#model = model;
    this.add('response.created', { response: this.#response('in_progress', null) });
    this.add('response.in_progress', { response: this.#response('in_progress', null) });
  }

  add(type: string, fields: Record<string, unknown>): this {
    this.events.push({ event: type, data: { type, sequence_number: this.events.length, ...fields } });
    return this;
  }

  /** A reasoning item whose summary streams in `pieces`, with encrypted content on its done item. */
  reasoning(
    outputIndex: number,
    id: string,
    pieces: readonly string[],
    encryptedContent: string | null,
  ): this {
    this.add('response.output_item.added', {
      output_index: outputIndex,
      item: { id, type: 'reasoning', summary: [], encrypted_content: null },
    });
    this.add('response.reasoning_summary_part.added', {
      item_id: id,
      output_index: outputIndex,
      summary_index: 0,
      part: { type: 'summary_text', text: '' },
    });
    for (const delta of pieces) {
      this.add('response.reasoning_summary_text.delta', {
        item_id: id,
        output_index: outputIndex,
        summary_index: 0,
        delta,
        obfuscation: 'x',
      });
    }
    const text = pieces.join('');
    this.add('response.reasoning_summary_text.done', {
      item_id: id,
      output_index: outputIndex,
      summary_index: 0,
      text,
    });
    this.add('response.reasoning_summary_part.done', {
      item_id: id,
      output_index: outputIndex,
      summary_index: 0,
      part: { type: 'summary_text', text },
    });
    return this.add('response.output_item.done', {
      output_index: outputIndex,
      item: {
        id,
        type: 'reasoning',
        summary: [{ type: 'summary_text', text }],
        encrypted_content: encryptedContent,
      },
    });
  }

  /** An assistant message whose text streams in `pieces`. */
  message(outputIndex: number, id: string, pieces: readonly string[]): this {
    this.add('response.output_item.added', {
      output_index: outputIndex,
      item: { id, type: 'message', status: 'in_progress', content: [], role: 'assistant' },
    });
    this.add('response.content_part.added', {
      item_id: id,
      output_index: outputIndex,
      content_index: 0,
      part: { type: 'output_text', annotations: [], logprobs: [], text: '' },
    });
    for (const delta of pieces) {
      this.add('response.output_text.delta', {
        item_id: id,
        output_index: outputIndex,
        content_index: 0,
        delta,
        logprobs: [],
      });
    }
    const text = pieces.join('');
    this.add('response.output_text.done', {
      item_id: id,
      output_index: outputIndex,
      content_index: 0,
      text,
      logprobs: [],
    });
    this.add('response.content_part.done', {
      item_id: id,
      output_index: outputIndex,
      content_index: 0,
      part: { type: 'output_text', annotations: [], logprobs: [], text },
    });
    return this.add('response.output_item.done', {
      output_index: outputIndex,
      item: {
        id,
        type: 'message',
        status: 'completed',
        content: [{ type: 'output_text', annotations: [], logprobs: [], text }],
        role: 'assistant',
      },
    });
  }

  /** A function call item's start (arguments follow with {@link functionArguments}). */
  functionCallAdded(outputIndex: number, id: string, callId: string, name: string): this {
    return this.add('response.output_item.added', {
      output_index: outputIndex,
      item: { id, type: 'function_call', status: 'in_progress', arguments: '', call_id: callId, name },
    });
  }

  functionArguments(outputIndex: number, id: string, delta: string): this {
    return this.add('response.function_call_arguments.delta', {
      item_id: id,
      output_index: outputIndex,
      delta,
      obfuscation: 'x',
    });
  }

  functionCallDone(
    outputIndex: number,
    id: string,
    callId: string,
    name: string,
    argumentsText: string,
  ): this {
    this.add('response.function_call_arguments.done', {
      item_id: id,
      output_index: outputIndex,
      arguments: argumentsText,
    });
    return this.add('response.output_item.done', {
      output_index: outputIndex,
      item: {
        id,
        type: 'function_call',
        status: 'completed',
        arguments: argumentsText,
        call_id: callId,
        name,
      },
    });
  }

  /** `response.completed`, or `response.incomplete` with its reason. */
  completed(usage: Record<string, unknown> | null, incompleteReason?: string): ScriptedResponse {
    const status = incompleteReason === undefined ? 'completed' : 'incomplete';
    this.add(`response.${status}`, {
      response: {
        ...this.#response(status, usage),
        incomplete_details: incompleteReason === undefined ? null : { reason: incompleteReason },
      },
    });
    return { kind: 'sse', events: this.events };
  }

  #response(status: string, usage: Record<string, unknown> | null): Record<string, unknown> {
    return {
      id: this.#responseId,
      object: 'response',
      created_at: 1764806400,
      status,
      error: null,
      incomplete_details: null,
      model: this.#model,
      output: [],
      parallel_tool_calls: true,
      service_tier: 'default',
      store: true,
      usage,
    };
  }
}
