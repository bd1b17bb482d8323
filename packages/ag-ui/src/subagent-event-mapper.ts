import { randomUUID } from 'node:crypto';
import { type Event as AgUiEvent, EventType } from '@ag-ui/core';
import type { StreamEventOf } from '@ghost/core';

/** A nested agent's text message, as the stream showed it. */
export interface StreamedSubagentMessage {
  readonly messageId: string;
  /** The nested agent's invocation id: the message's `subagentRunId`. */
  readonly subagentRunId: string;
  /** The agent's name. */
  readonly name: string;
  /** The run's own tool call under which the agent ran (at any depth), when there is one. */
  readonly rootToolCallId: string | undefined;
  text: string;
}

/** The tool call id a `tool:<id>` source-path segment names. */
function toolCallIdOf(segment: string | undefined): string | undefined {
  return segment?.startsWith('tool:') === true ? segment.slice('tool:'.length) : undefined;
}

/**
 * Maps the `agent_stream` events of a run streamed with `includeAgentEvents` to AG-UI's subagent
 * events: `SUBAGENT_STARTED` when a nested agent starts (its `subagentRunId` is its invocation
 * id, `parentToolCallId` the run's tool call that ran it, `parentSubagentRunId` the agent above
 * it when it runs deeper), each of its model turns' text as a text message of its own attributed
 * to it (`subagentRunId`, `name`), and `SUBAGENT_FINISHED` or `SUBAGENT_ERROR` when it ends. Its
 * tool calls and reasoning are not shown: the run's tool call that ran it carries its answer.
 */
export class SubagentEventMapper {
  /** Every nested agent's text message, in the order they started. */
  readonly messages: StreamedSubagentMessage[] = [];
  readonly #openText = new Map<string, StreamedSubagentMessage>();
  readonly #active = new Set<string>();
  readonly #stepNameAt: (path: readonly string[]) => string | undefined;

  /** `stepNameAt` names the open assembly step an agent's events come from, by their path. */
  constructor(stepNameAt: (path: readonly string[]) => string | undefined = () => undefined) {
    this.#stepNameAt = stepNameAt;
  }

  map(out: AgUiEvent[], event: StreamEventOf<'agent_stream'>): void {
    const { source, event: inner } = event.data;
    const subagentRunId = source.invocationId;
    const { timestamp } = event;
    switch (inner.type) {
      case 'invocation_start': {
        const { path } = source;
        const parentToolCallId = source.depth === 1 ? toolCallIdOf(path[0]) : undefined;
        const parentSubagentRunId = source.depth > 1 ? path[path.length - 4] : undefined;
        const stepName = source.depth === 1 ? this.#stepNameAt(path) : undefined;
        this.#active.add(subagentRunId);
        out.push({
          type: EventType.SUBAGENT_STARTED,
          timestamp,
          subagentRunId,
          name: source.agentName,
          ...(parentToolCallId === undefined ? {} : { parentToolCallId }),
          ...(parentSubagentRunId === undefined ? {} : { parentSubagentRunId }),
          ...(stepName === undefined ? {} : { metadata: { ghost: { stepName } } }),
        });
        break;
      }
      case 'text_delta': {
        if (inner.data.text === '') break;
        let message = this.#openText.get(subagentRunId);
        if (message === undefined) {
          message = {
            messageId: randomUUID(),
            subagentRunId,
            name: source.agentName,
            rootToolCallId: toolCallIdOf(source.path[0]),
            text: '',
          };
          this.#openText.set(subagentRunId, message);
          this.messages.push(message);
          out.push({
            type: EventType.TEXT_MESSAGE_START,
            timestamp,
            messageId: message.messageId,
            role: 'assistant',
            name: source.agentName,
            subagentRunId,
          });
        }
        message.text += inner.data.text;
        out.push({
          type: EventType.TEXT_MESSAGE_CONTENT,
          timestamp,
          messageId: message.messageId,
          delta: inner.data.text,
          subagentRunId,
        });
        break;
      }
      case 'model_start':
      case 'model_stop':
      case 'tool_call_start':
        this.#closeText(out, subagentRunId, timestamp);
        break;
      case 'invocation_stop':
        this.#closeText(out, subagentRunId, timestamp);
        if (this.#active.delete(subagentRunId)) {
          out.push({
            type: EventType.SUBAGENT_FINISHED,
            timestamp,
            subagentRunId,
            outcome: { type: 'success' },
          });
        }
        break;
      case 'invocation_error':
        this.#closeText(out, subagentRunId, timestamp);
        if (this.#active.delete(subagentRunId)) {
          out.push({
            type: EventType.SUBAGENT_ERROR,
            timestamp,
            subagentRunId,
            message: inner.data.error.message,
            ...(inner.data.error.code === undefined ? {} : { code: inner.data.error.code }),
          });
        }
        break;
      default:
        break;
    }
  }

  /**
   * Closes what is still open when the run ends. Ghost ends every nested agent before the run's
   * terminal event, so this only matters for a stream that stopped early.
   */
  finish(out: AgUiEvent[], timestamp: number): void {
    for (const subagentRunId of [...this.#openText.keys()]) this.#closeText(out, subagentRunId, timestamp);
    for (const subagentRunId of this.#active) {
      out.push({
        type: EventType.SUBAGENT_ERROR,
        timestamp,
        subagentRunId,
        message: 'The run ended before this agent finished.',
      });
    }
    this.#active.clear();
  }

  #closeText(out: AgUiEvent[], subagentRunId: string, timestamp: number): void {
    const message = this.#openText.get(subagentRunId);
    if (message === undefined) return;
    this.#openText.delete(subagentRunId);
    out.push({ type: EventType.TEXT_MESSAGE_END, timestamp, messageId: message.messageId, subagentRunId });
  }
}
