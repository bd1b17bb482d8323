// Responses API stream events in the shapes the openai SDK's types document
// (`ResponseStreamEvent`); the loopback server numbers them with `sequence_number`.

type Event = Record<string, unknown>;

export const responseId = 'resp_0123';
export const answeringModel = 'gpt-5-2025-08-07';

function responseObject(status: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: responseId,
    object: 'response',
    created_at: 1_765_000_000,
    status,
    model: answeringModel,
    output: [],
    error: null,
    incomplete_details: null,
    usage: null,
    ...extra,
  };
}

export function responseCreated(): Event {
  return { type: 'response.created', response: responseObject('in_progress') };
}

function responseInProgress(): Event {
  return { type: 'response.in_progress', response: responseObject('in_progress') };
}

/** A usage object as OpenAI reports it; `input_tokens` includes the cached ones. */
export function usage(counts: {
  input: number;
  cached?: number;
  output: number;
  reasoning?: number;
}): Record<string, unknown> {
  return {
    input_tokens: counts.input,
    input_tokens_details: counts.cached === undefined ? {} : { cached_tokens: counts.cached },
    output_tokens: counts.output,
    output_tokens_details: counts.reasoning === undefined ? {} : { reasoning_tokens: counts.reasoning },
    total_tokens: counts.input + counts.output,
  };
}

export function responseCompleted(usageObject?: Record<string, unknown>): Event {
  return {
    type: 'response.completed',
    response: responseObject('completed', usageObject === undefined ? {} : { usage: usageObject }),
  };
}

export function responseIncomplete(reason: string, usageObject?: Record<string, unknown>): Event {
  return {
    type: 'response.incomplete',
    response: responseObject('incomplete', {
      incomplete_details: { reason },
      ...(usageObject === undefined ? {} : { usage: usageObject }),
    }),
  };
}

export function responseFailed(code: string, message: string): Event {
  return { type: 'response.failed', response: responseObject('failed', { error: { code, message } }) };
}

export function errorEvent(code: string | null, message: string): Event {
  return { type: 'error', code, message, param: null };
}

/** A message item's events: added, content part, the text deltas, done. */
export function messageEvents(outputIndex: number, itemId: string, deltas: readonly string[]): Event[] {
  const text = deltas.join('');
  const part = { type: 'output_text', text: '', annotations: [] };
  return [
    {
      type: 'response.output_item.added',
      output_index: outputIndex,
      item: { id: itemId, type: 'message', status: 'in_progress', role: 'assistant', content: [] },
    },
    {
      type: 'response.content_part.added',
      item_id: itemId,
      output_index: outputIndex,
      content_index: 0,
      part,
    },
    ...deltas.map((delta) => ({
      type: 'response.output_text.delta',
      item_id: itemId,
      output_index: outputIndex,
      content_index: 0,
      delta,
      logprobs: [],
    })),
    {
      type: 'response.output_text.done',
      item_id: itemId,
      output_index: outputIndex,
      content_index: 0,
      text,
      logprobs: [],
    },
    {
      type: 'response.content_part.done',
      item_id: itemId,
      output_index: outputIndex,
      content_index: 0,
      part: { ...part, text },
    },
    {
      type: 'response.output_item.done',
      output_index: outputIndex,
      item: {
        id: itemId,
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text, annotations: [] }],
      },
    },
  ];
}

/** A reasoning item with summary parts streamed as `response.reasoning_summary_text.delta`. */
export function reasoningSummaryEvents(
  outputIndex: number,
  itemId: string,
  summaries: readonly (readonly string[])[],
  encryptedContent: string,
): Event[] {
  const events: Event[] = [
    {
      type: 'response.output_item.added',
      output_index: outputIndex,
      item: { id: itemId, type: 'reasoning', summary: [] },
    },
  ];
  summaries.forEach((deltas, summaryIndex) => {
    const where = { item_id: itemId, output_index: outputIndex, summary_index: summaryIndex };
    events.push({
      type: 'response.reasoning_summary_part.added',
      ...where,
      part: { type: 'summary_text', text: '' },
    });
    for (const delta of deltas)
      events.push({ type: 'response.reasoning_summary_text.delta', ...where, delta });
    events.push({ type: 'response.reasoning_summary_text.done', ...where, text: deltas.join('') });
    events.push({
      type: 'response.reasoning_summary_part.done',
      ...where,
      part: { type: 'summary_text', text: deltas.join('') },
    });
  });
  events.push({
    type: 'response.output_item.done',
    output_index: outputIndex,
    item: {
      id: itemId,
      type: 'reasoning',
      summary: summaries.map((deltas) => ({ type: 'summary_text', text: deltas.join('') })),
      encrypted_content: encryptedContent,
    },
  });
  return events;
}

/** A reasoning item whose raw reasoning streams as `response.reasoning_text.delta` (gpt-oss style). */
export function reasoningTextEvents(outputIndex: number, itemId: string, deltas: readonly string[]): Event[] {
  const where = { item_id: itemId, output_index: outputIndex, content_index: 0 };
  return [
    {
      type: 'response.output_item.added',
      output_index: outputIndex,
      item: { id: itemId, type: 'reasoning', summary: [] },
    },
    ...deltas.map((delta) => ({ type: 'response.reasoning_text.delta', ...where, delta })),
    { type: 'response.reasoning_text.done', ...where, text: deltas.join('') },
    {
      type: 'response.output_item.done',
      output_index: outputIndex,
      item: {
        id: itemId,
        type: 'reasoning',
        summary: [],
        content: [{ type: 'reasoning_text', text: deltas.join('') }],
      },
    },
  ];
}

/** A function call item as it starts: `call_id` and `name`, arguments still empty. */
export function functionCallAdded(outputIndex: number, itemId: string, callId: string, name: string): Event {
  return {
    type: 'response.output_item.added',
    output_index: outputIndex,
    item: { id: itemId, type: 'function_call', status: 'in_progress', call_id: callId, name, arguments: '' },
  };
}

export function argumentsDelta(outputIndex: number, itemId: string, delta: string): Event {
  return {
    type: 'response.function_call_arguments.delta',
    item_id: itemId,
    output_index: outputIndex,
    delta,
  };
}

export function argumentsDone(outputIndex: number, itemId: string, name: string, args: string): Event {
  return {
    type: 'response.function_call_arguments.done',
    item_id: itemId,
    output_index: outputIndex,
    name,
    arguments: args,
  };
}

export function functionCallDone(
  outputIndex: number,
  itemId: string,
  callId: string,
  name: string,
  args: string,
): Event {
  return {
    type: 'response.output_item.done',
    output_index: outputIndex,
    item: { id: itemId, type: 'function_call', status: 'completed', call_id: callId, name, arguments: args },
  };
}

/** A whole function call: added, its arguments in pieces, done. */
export function functionCallEvents(
  outputIndex: number,
  itemId: string,
  callId: string,
  name: string,
  pieces: readonly string[],
): Event[] {
  const args = pieces.join('');
  return [
    functionCallAdded(outputIndex, itemId, callId, name),
    ...pieces.map((piece) => argumentsDelta(outputIndex, itemId, piece)),
    argumentsDone(outputIndex, itemId, name, args),
    functionCallDone(outputIndex, itemId, callId, name, args),
  ];
}

/** A whole text answer: created, in progress, one message, completed with this usage. */
export function textAnswer(deltas: readonly string[], usageObject?: Record<string, unknown>): Event[] {
  return [
    responseCreated(),
    responseInProgress(),
    ...messageEvents(0, 'msg_1', deltas),
    responseCompleted(usageObject),
  ];
}
