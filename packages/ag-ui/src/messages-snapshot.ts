import type { Message, ToolCall } from '@ag-ui/core';
import type { Artifact, ModelMessage } from '@ghost/core';
import type { ModelAssistantMessage, ModelToolMessage } from '@ghost/core/provider';
import { toolContentToAgUi, userContentToAgUi } from './content-parts.js';
import { reasoningValueOf } from './ghost-fields.js';
import type { StreamedSubagentMessage } from './subagent-event-mapper.js';

/** A streamed reasoning message: its id and the text streamed into it. */
export interface StreamedReasoning {
  readonly id: string;
  text: string;
}

/** A model turn as the stream showed it. */
export interface StreamedTurn {
  /** The id of the turn's assistant message (its text, and the parent of its tool calls). */
  readonly messageId: string;
  readonly reasoning: readonly StreamedReasoning[];
  /** The text streamed so far. */
  readonly text: string;
}

/** A call a code-mode program made, as the stream showed it, with its result once it came. */
export interface StreamedBrokeredCall {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly arguments: string;
  readonly parentToolCallId: string;
  /** The assistant message the call was shown under. */
  readonly parentMessageId: string;
  result?: {
    readonly messageId: string;
    readonly content: string;
    readonly isError: boolean;
    readonly artifacts: readonly Artifact[] | undefined;
  };
}

/** What the stream showed of a run, and the run's conversation, to build its snapshot from. */
export interface SnapshotSource {
  /** The AG-UI messages the run started from, kept as they are (ids, system and UI messages). */
  readonly inputMessages: readonly Message[] | undefined;
  /** The run's conversation (`run.messages`). */
  readonly transcript: readonly ModelMessage[];
  /** The turns that finished, in order: each added one assistant message to the conversation. */
  readonly finishedTurns: readonly StreamedTurn[];
  /** A turn cut short (cancelled, failed, out of time), whose streamed text the UI already shows. */
  readonly unfinishedTurn: StreamedTurn | undefined;
  /** The model's own tool calls the stream showed; the others are code mode's hidden controls. */
  readonly streamedToolCallIds: ReadonlySet<string>;
  readonly brokeredCalls: readonly StreamedBrokeredCall[];
  /** The message id each tool result was streamed under, by tool call id. */
  readonly resultMessageIds: ReadonlyMap<string, string>;
  /** Nested agents' text messages (a run streamed with `includeAgentEvents`), in stream order. */
  readonly subagentMessages?: readonly StreamedSubagentMessage[];
  /** Every message id the client holds: the input's and those the stream created. */
  readonly knownMessageIds: ReadonlySet<string>;
  readonly newId: () => string;
}

/**
 * Where the run's own messages start in its conversation: each finished turn added exactly one
 * assistant message, so the first of the last `finishedTurns` assistant messages starts them.
 */
function runMessagesStart(transcript: readonly ModelMessage[], finishedTurns: number): number {
  if (finishedTurns === 0) return transcript.length;
  let seen = 0;
  for (let index = transcript.length - 1; index >= 0; index -= 1) {
    if (transcript[index]?.role !== 'assistant') continue;
    seen += 1;
    if (seen === finishedTurns) return index;
  }
  return 0;
}

function toolCallOf(
  call: { id: string; name: string; arguments: string },
  ghost: Record<string, unknown> | undefined,
): ToolCall {
  return {
    id: call.id,
    type: 'function',
    function: { name: call.name, arguments: call.arguments },
    ...(ghost === undefined ? {} : { metadata: { ghost } }),
  };
}

class SnapshotBuilder {
  readonly messages: Message[] = [];
  readonly #source: SnapshotSource;
  #turn = 0;
  /** Results of program calls, added after the tool results of the assistant message they ran under. */
  #pendingBrokeredResults: Message[] = [];
  /** Nested agents' messages not placed yet, by the run's tool call they ran under. */
  readonly #subagentMessages = new Map<string | undefined, Message[]>();

  constructor(source: SnapshotSource) {
    this.#source = source;
    for (const message of source.subagentMessages ?? []) {
      const placed = this.#subagentMessages.get(message.rootToolCallId) ?? [];
      placed.push({
        id: message.messageId,
        role: 'assistant',
        content: message.text,
        name: message.name,
        subagentRunId: message.subagentRunId,
      });
      this.#subagentMessages.set(message.rootToolCallId, placed);
    }
  }

  /** The nested agents' messages of one tool call, once: they go before its result. */
  #takeSubagentMessages(toolCallId: string | undefined): Message[] {
    const messages = this.#subagentMessages.get(toolCallId) ?? [];
    this.#subagentMessages.delete(toolCallId);
    return messages;
  }

  add(message: ModelMessage, isRunMessage: boolean): void {
    if (message.role !== 'tool') this.#flushBrokeredResults();
    if (message.role === 'user') {
      this.messages.push({
        id: this.#source.newId(),
        role: 'user',
        content: userContentToAgUi(message.content),
      });
    } else if (message.role === 'assistant') {
      this.#addAssistant(message, isRunMessage ? this.#source.finishedTurns[this.#turn++] : undefined);
    } else {
      this.#addTool(message, isRunMessage);
    }
  }

  addUnfinishedTurn(turn: StreamedTurn): void {
    this.#flushBrokeredResults();
    for (const reasoning of turn.reasoning) {
      this.messages.push({ id: reasoning.id, role: 'reasoning', content: reasoning.text });
    }
    if (turn.text !== '') this.messages.push({ id: turn.messageId, role: 'assistant', content: turn.text });
  }

  finish(): Message[] {
    this.#flushBrokeredResults();
    // Those whose call has no result (the run ended during it) come last, as they were shown.
    for (const messages of this.#subagentMessages.values()) this.messages.push(...messages);
    this.#subagentMessages.clear();
    return this.messages;
  }

  #addAssistant(message: ModelAssistantMessage, turn: StreamedTurn | undefined): void {
    const { newId, streamedToolCallIds, brokeredCalls } = this.#source;
    const reasoning = message.reasoning ?? [];
    for (const [index, entry] of reasoning.entries()) {
      const id = turn?.reasoning[index]?.id ?? newId();
      this.messages.push({
        id,
        role: 'reasoning',
        content: entry.text,
        encryptedValue: reasoningValueOf(entry),
      });
    }
    // Reasoning the stream split differently from the provider's blocks stays, as shown.
    for (const streamed of turn?.reasoning.slice(reasoning.length) ?? []) {
      this.messages.push({ id: streamed.id, role: 'reasoning', content: streamed.text });
    }
    const id = turn?.messageId ?? newId();
    const toolCalls: ToolCall[] = [];
    for (const call of message.toolCalls ?? []) {
      const isControl = turn !== undefined && !streamedToolCallIds.has(call.id);
      toolCalls.push(toolCallOf(call, isControl ? { control: true } : undefined));
    }
    for (const call of turn === undefined ? [] : brokeredCalls) {
      if (call.parentMessageId !== id) continue;
      toolCalls.push(
        toolCallOf(
          { id: call.toolCallId, name: call.toolName, arguments: call.arguments },
          { parentToolCallId: call.parentToolCallId },
        ),
      );
      if (call.result === undefined) continue;
      this.#pendingBrokeredResults.push(...this.#takeSubagentMessages(call.toolCallId));
      this.#pendingBrokeredResults.push({
        id: call.result.messageId,
        role: 'tool',
        toolCallId: call.toolCallId,
        content: toolContentToAgUi(call.result.content, call.result.artifacts),
        ...(call.result.isError ? { error: call.result.content } : {}),
        metadata: {
          ghost: {
            parentToolCallId: call.parentToolCallId,
            ...(call.result.isError ? { isError: true } : {}),
          },
        },
      });
    }
    this.messages.push({
      id,
      role: 'assistant',
      content: message.content,
      ...(toolCalls.length > 0 ? { toolCalls } : {}),
    });
  }

  #addTool(message: ModelToolMessage, isRunMessage: boolean): void {
    const { resultMessageIds, streamedToolCallIds, newId } = this.#source;
    const streamedId = resultMessageIds.get(message.toolCallId);
    // A result the stream never showed belongs to a hidden control call, or to a call Ghost
    // answered for the client (see conversationFromAgUi).
    const isControl =
      isRunMessage && streamedId === undefined && !streamedToolCallIds.has(message.toolCallId);
    if (isRunMessage) this.messages.push(...this.#takeSubagentMessages(message.toolCallId));
    this.messages.push({
      id: streamedId ?? newId(),
      role: 'tool',
      toolCallId: message.toolCallId,
      content: toolContentToAgUi(message.content, message.artifacts),
      ...(message.isError === true ? { error: message.content } : {}),
      ...(isControl || message.isError === true
        ? {
            metadata: {
              ghost: {
                ...(isControl ? { control: true } : {}),
                ...(message.isError ? { isError: true } : {}),
              },
            },
          }
        : {}),
    });
  }

  #flushBrokeredResults(): void {
    this.messages.push(...this.#pendingBrokeredResults);
    this.#pendingBrokeredResults = [];
  }
}

/**
 * Gives fresh ids from the first message the client has not seen, when a message it has seen
 * comes after it. AG-UI clients keep the messages they hold where they are and add new ones at
 * the end, so a new message (an `exec` call's result, say) before a known one would land in the
 * wrong place; with fresh ids the client drops its copies and takes the rest in order.
 */
function keepOrderForClient(messages: Message[], known: ReadonlySet<string>, newId: () => string): Message[] {
  const firstNew = messages.findIndex((message) => !known.has(message.id));
  if (firstNew === -1) return messages;
  const isKnownAfter = messages.slice(firstNew).some((message) => known.has(message.id));
  if (!isKnownAfter) return messages;
  return messages.map((message, index) => (index < firstNew ? message : { ...message, id: newId() }));
}

/**
 * The messages of an AG-UI `MESSAGES_SNAPSHOT` at the end of a run: the thread as the client
 * sent it, then the run's conversation (what the model saw, code mode's `exec` calls and results
 * included, tagged `metadata.ghost.control`), with the calls its programs made under the
 * assistant message that ran them (tagged `metadata.ghost.parentToolCallId`), the text of the
 * agents nested in the run (attributed with `subagentRunId`) before the result of the call they
 * ran under, and the text of a turn cut short. Sent back as the next request's `messages`, it gives the model this run's
 * conversation exactly (see `conversationFromAgUi`).
 */
export function messagesSnapshotOf(source: SnapshotSource): Message[] {
  const start = runMessagesStart(source.transcript, source.finishedTurns.length);
  const builder = new SnapshotBuilder(source);
  if (source.inputMessages !== undefined) {
    builder.messages.push(...source.inputMessages);
  } else {
    for (const message of source.transcript.slice(0, start)) builder.add(message, false);
  }
  for (const message of source.transcript.slice(start)) builder.add(message, true);
  if (source.unfinishedTurn !== undefined) builder.addUnfinishedTurn(source.unfinishedTurn);
  return keepOrderForClient(builder.finish(), source.knownMessageIds, source.newId);
}
