import { randomUUID } from 'node:crypto';
import { type Event as AgUiEvent, EventType, type Message, PROTOCOL_VERSION } from '@ag-ui/core';
import {
  ConfigurationError,
  type ErrorSummary,
  type Run,
  type StreamEvent,
  type StreamEventOf,
} from '@ghost/core';
import type { TerminalStreamEventType } from '@ghost/core/plugin';
import { approvalInterrupt } from './approval-interrupt.js';
import { type AssemblyRoutingEventType, AssemblyStepMapper } from './assembly-step-mapper.js';
import { toolContentToAgUi } from './content-parts.js';
import {
  messagesSnapshotOf,
  type StreamedBrokeredCall,
  type StreamedReasoning,
  type StreamedTurn,
} from './messages-snapshot.js';
import { SubagentEventMapper } from './subagent-event-mapper.js';
import { tokenUsageOf } from './token-usage.js';

/** Options of {@link AgUiEventMapper} and `toAgUiEvents`. */
export interface AgUiEventMapperOptions {
  /** The AG-UI thread the run belongs to. */
  readonly threadId: string;
  /** The AG-UI run id, such as the request's `runId`. Default: the Ghost run's id. */
  readonly runId?: string;
  /**
   * The AG-UI messages the run's conversation was made from (the request's `messages`): the
   * closing `MESSAGES_SNAPSHOT` starts with them as they are. Without them the snapshot renders
   * the whole conversation with new ids.
   */
  readonly inputMessages?: readonly Message[];
  /** Whether to send a `MESSAGES_SNAPSHOT` of the conversation before the run's last event. Default true. */
  readonly messagesSnapshot?: boolean;
}

type TerminalEvent = StreamEventOf<TerminalStreamEventType>;

/** A Ghost event AG-UI has no event for, as a `CUSTOM` event named `ghost.<type>` with its data. */
function ghostCustomEvent(event: StreamEvent): AgUiEvent {
  return {
    type: EventType.CUSTOM,
    timestamp: event.timestamp,
    name: `ghost.${event.type}`,
    value: event.data,
  };
}

/** The step name of a model turn (its model call and the tool calls it makes): `turn-1`, `turn-2`, ... */
export function stepNameOf(turn: number): string {
  return `turn-${turn}`;
}

/**
 * Maps one Ghost run's stream events to AG-UI events, in order; `toAgUiEvents` drives it for a
 * whole stream. Feed every event to {@link AgUiEventMapper.map}; after the stream ends, take the
 * closing events from {@link AgUiEventMapper.finish}.
 *
 * - `run_start` → `RUN_STARTED`. Each model turn is a step (`STEP_STARTED` / `STEP_FINISHED`,
 *   named `turn-N`) that holds the model's call and the tool calls it makes.
 * - A turn's text is one text message (`TEXT_MESSAGE_START` / `CONTENT` / `END`); its id is the
 *   turn's assistant message, the parent of the turn's tool calls. Reasoning streams as
 *   `REASONING_START`, `REASONING_MESSAGE_START` / `CONTENT` / `END`, `REASONING_END`.
 * - The model's tool calls stream as `TOOL_CALL_START` / `ARGS` / `END` while the model writes
 *   them, and `TOOL_CALL_RESULT` when they finish. A code-mode program's calls appear by name
 *   when they start (with their whole arguments), under the assistant message whose `exec` ran
 *   them and tagged `metadata.ghost.parentToolCallId`; `exec`, `wait` and `stop` stay hidden, as
 *   in Ghost's stream. Programs and model retries appear as `CUSTOM` events named
 *   `ghost.program_start`, `ghost.program_stop` and `ghost.model_retry`; a model-directed
 *   subagent's lifecycle (`subagent` events: spawned, turns, cancelled) as `ghost.subagent`, and
 *   a tool call waiting for a person (`approval_requested`, `approval_resolved`) as
 *   `ghost.approval_requested` and `ghost.approval_resolved`.
 * - A run streamed with `includeAgentEvents` shows the agents nested in it (`agent.asTool()`):
 *   `SUBAGENT_STARTED` (`subagentRunId` = the agent's invocation id, `parentToolCallId` = the
 *   tool call that ran it), each of its turns' text as a text message of its own attributed to
 *   it (`subagentRunId`, `name`), then `SUBAGENT_FINISHED` or `SUBAGENT_ERROR`. Its text stays in
 *   the snapshot, before the result of the run's tool call it ran under; sent back, it is left
 *   out of the model's conversation (`conversationFromAgUi`).
 * - An assembly's run (a Workflow, Swarm or Graph from `@ghost/assemblies`): each attempt of a
 *   step is a step of its own (`STEP_STARTED` / `STEP_FINISHED` named `<step>#<stepId>`, with
 *   `metadata.ghost`: assembly, step, agent, attempt, path, and the error of a failed attempt);
 *   with `includeAgentEvents`, the step's agent is a subagent whose `SUBAGENT_STARTED` names
 *   its step in `metadata.ghost.stepName`, and its text is attributed to it as above. Forks,
 *   joins, transitions and handoff loops are `CUSTOM` events named `ghost.assembly_fork`, ...
 * - The run ends with a `MESSAGES_SNAPSHOT` of its conversation (see `messagesSnapshotOf`), then:
 *   completed → `RUN_FINISHED` (outcome `success`, `result` = the structured output if any);
 *   cancelled → `RUN_FINISHED` with outcome `cancelled`; failed → `RUN_ERROR` with Ghost's
 *   error code (such as `MODEL_FAILED`); partial (out of time; the text so far stays in the
 *   thread) → `RUN_ERROR` with code `RUN_DEADLINE_EXCEEDED` and `metadata.ghost.outcome`
 *   `partial`. Each carries the run's token usage.
 *
 * @example
 * ```ts
 * const mapper = new AgUiEventMapper({ threadId: 'thread-1' });
 * const stream = agent.streamAsk('Where is my parcel?');
 * for await (const event of stream) for (const agUi of mapper.map(event)) send(agUi);
 * for (const agUi of mapper.finish(await stream.run)) send(agUi);
 * ```
 */
export class AgUiEventMapper {
  readonly #options: AgUiEventMapperOptions;
  #runId: string | undefined;
  #provider: string | undefined;
  #modelId: string | undefined;
  #turnNumber = 0;
  #turn: { messageId: string; reasoning: StreamedReasoning[]; text: string; isFinished: boolean } | undefined;
  #isStepOpen = false;
  #isTextOpen = false;
  #openReasoning: StreamedReasoning | undefined;
  readonly #openToolCalls = new Set<string>();
  readonly #finishedTurns: StreamedTurn[] = [];
  readonly #streamedToolCallIds = new Set<string>();
  readonly #brokeredCalls = new Map<string, StreamedBrokeredCall>();
  readonly #parentMessageIds = new Map<string, string>();
  readonly #resultMessageIds = new Map<string, string>();
  readonly #knownMessageIds = new Set<string>();
  readonly #steps = new AssemblyStepMapper();
  readonly #subagents = new SubagentEventMapper((path) => this.#steps.stepNameAt(path));
  #terminal: TerminalEvent | undefined;

  constructor(options: AgUiEventMapperOptions) {
    if (typeof options?.threadId !== 'string' || options.threadId === '') {
      throw new ConfigurationError(
        'AG-UI events need the thread they belong to: pass a non-empty threadId.',
        {
          code: 'AG_UI_THREAD_ID_MISSING',
        },
      );
    }
    this.#options = options;
    this.#runId = options.runId;
    for (const message of options.inputMessages ?? []) this.#knownMessageIds.add(message.id);
  }

  /** The AG-UI events for one Ghost event, often none (usage and bookkeeping have no AG-UI form). */
  map(event: StreamEvent): AgUiEvent[] {
    const out: AgUiEvent[] = [];
    switch (event.type) {
      case 'run_start':
        this.#runStart(out, event as StreamEventOf<'run_start'>);
        break;
      case 'model_start':
        this.#modelStart(out, event as StreamEventOf<'model_start'>);
        break;
      case 'text_delta':
        this.#text(out, event.data.text, event.timestamp);
        break;
      case 'reasoning_delta':
        this.#reasoning(out, event.data.text, event.timestamp);
        break;
      case 'tool_call_start':
        this.#toolCallStart(out, event as StreamEventOf<'tool_call_start'>);
        break;
      case 'tool_call_delta':
        this.#toolCallDelta(out, event as StreamEventOf<'tool_call_delta'>);
        break;
      case 'tool_call_stop':
        this.#toolCallStop(out, event as StreamEventOf<'tool_call_stop'>);
        break;
      case 'model_stop':
        this.#modelStop(out, event.timestamp);
        break;
      case 'tool_start':
        this.#toolStart(out, event as StreamEventOf<'tool_start'>);
        break;
      case 'tool_stop':
        this.#toolStop(out, event as StreamEventOf<'tool_stop'>);
        break;
      case 'program_start':
        this.#programStart(out, event as StreamEventOf<'program_start'>);
        break;
      case 'model_retry':
      case 'program_stop':
      case 'subagent':
      case 'approval_requested':
      case 'approval_resolved':
        out.push(ghostCustomEvent(event));
        break;
      case 'agent_stream':
        this.#subagents.map(out, event as StreamEventOf<'agent_stream'>);
        break;
      default:
        this.#mapAssemblyOrEnd(out, event);
    }
    return out;
  }

  /** An assembly's step and routing events, and the run's terminal event; the rest show nothing. */
  #mapAssemblyOrEnd(out: AgUiEvent[], event: StreamEvent): void {
    switch (event.type) {
      case 'assembly_step_start':
        this.#steps.start(out, event as StreamEventOf<'assembly_step_start'>);
        break;
      case 'assembly_step_stop':
      case 'assembly_step_error':
        this.#steps.finish(out, event as StreamEventOf<'assembly_step_stop' | 'assembly_step_error'>);
        break;
      case 'assembly_fork':
      case 'assembly_join':
      case 'assembly_transition':
      case 'assembly_handoff_loop':
        this.#steps.routing(out, event as StreamEventOf<AssemblyRoutingEventType>);
        break;
      case 'run_stop':
      case 'run_error':
      case 'run_partial':
      case 'run_cancel':
      case 'run_suspend':
        this.#runEnd(out, event as TerminalEvent);
        break;
      default:
        // usage, invocation_start/stop/error and events added later carry nothing AG-UI shows.
        break;
    }
  }

  #runStart(out: AgUiEvent[], event: StreamEventOf<'run_start'>): void {
    this.#runId ??= event.data.runId;
    out.push({
      type: EventType.RUN_STARTED,
      timestamp: event.timestamp,
      threadId: this.#options.threadId,
      runId: this.#runId,
      protocolVersion: PROTOCOL_VERSION,
    });
  }

  /** A model turn starts: the previous turn's output and step close, and its step opens. */
  #modelStart(out: AgUiEvent[], event: StreamEventOf<'model_start'>): void {
    const timestamp = event.timestamp;
    this.#closeTurnOutput(out, timestamp);
    this.#closeStep(out, timestamp);
    this.#provider = event.data.provider;
    this.#modelId = event.data.modelId;
    this.#turnNumber = event.data.turn;
    this.#turn = { messageId: randomUUID(), reasoning: [], text: '', isFinished: false };
    this.#isStepOpen = true;
    out.push({ type: EventType.STEP_STARTED, timestamp, stepName: stepNameOf(this.#turnNumber) });
  }

  #modelStop(out: AgUiEvent[], timestamp: number): void {
    this.#closeTurnOutput(out, timestamp);
    if (this.#turn !== undefined) {
      this.#turn.isFinished = true;
      this.#finishedTurns.push(this.#turn);
    }
  }

  /** The model starts writing a tool call: it belongs to the turn's assistant message. */
  #toolCallStart(out: AgUiEvent[], event: StreamEventOf<'tool_call_start'>): void {
    this.#closeTurnOutput(out, event.timestamp);
    const parentMessageId = this.#currentMessageId();
    this.#streamedToolCallIds.add(event.data.toolCallId);
    this.#openToolCalls.add(event.data.toolCallId);
    this.#knownMessageIds.add(parentMessageId);
    out.push({
      type: EventType.TOOL_CALL_START,
      timestamp: event.timestamp,
      toolCallId: event.data.toolCallId,
      toolCallName: event.data.toolName,
      parentMessageId,
    });
  }

  #toolCallDelta(out: AgUiEvent[], event: StreamEventOf<'tool_call_delta'>): void {
    if (this.#openToolCalls.has(event.data.toolCallId) && event.data.argumentsDelta !== '') {
      out.push({
        type: EventType.TOOL_CALL_ARGS,
        timestamp: event.timestamp,
        toolCallId: event.data.toolCallId,
        delta: event.data.argumentsDelta,
      });
    }
  }

  #toolCallStop(out: AgUiEvent[], event: StreamEventOf<'tool_call_stop'>): void {
    if (this.#openToolCalls.delete(event.data.toolCallId)) {
      out.push({
        type: EventType.TOOL_CALL_END,
        timestamp: event.timestamp,
        toolCallId: event.data.toolCallId,
      });
    }
  }

  /** A program starts: its calls will hang under the assistant message whose `exec` ran it. */
  #programStart(out: AgUiEvent[], event: StreamEventOf<'program_start'>): void {
    if (!this.#parentMessageIds.has(event.data.toolCallId)) {
      this.#parentMessageIds.set(event.data.toolCallId, this.#currentMessageId());
    }
    out.push(ghostCustomEvent(event));
  }

  /** The run's terminal event: everything still open closes; {@link finish} sends the end. */
  #runEnd(out: AgUiEvent[], event: TerminalEvent): void {
    this.#closeTurnOutput(out, event.timestamp);
    this.#closeStep(out, event.timestamp);
    this.#subagents.finish(out, event.timestamp);
    this.#steps.finishAll(out, event.timestamp);
    this.#terminal = event;
  }

  /**
   * The events that end the run: anything still open closed, the `MESSAGES_SNAPSHOT` (from
   * `run.messages`; left out without `run`, as when the run's cleanup failed), then
   * `RUN_FINISHED` or `RUN_ERROR`. Call it once, after the stream's last event.
   */
  finish(run?: Run): AgUiEvent[] {
    const out: AgUiEvent[] = [];
    const timestamp = Date.now();
    this.#closeTurnOutput(out, timestamp);
    this.#closeStep(out, timestamp);
    this.#subagents.finish(out, timestamp);
    this.#steps.finishAll(out, timestamp);
    if (run !== undefined && this.#options.messagesSnapshot !== false) {
      out.push({ type: EventType.MESSAGES_SNAPSHOT, timestamp, messages: this.#snapshot(run) });
    }
    out.push(this.#terminalEvent(run, timestamp));
    return out;
  }

  #snapshot(run: Run): Message[] {
    const turn = this.#turn;
    return messagesSnapshotOf({
      inputMessages: this.#options.inputMessages,
      transcript: run.messages,
      finishedTurns: this.#finishedTurns,
      unfinishedTurn: turn !== undefined && !turn.isFinished ? turn : undefined,
      streamedToolCallIds: this.#streamedToolCallIds,
      brokeredCalls: [...this.#brokeredCalls.values()],
      resultMessageIds: this.#resultMessageIds,
      subagentMessages: this.#subagents.messages,
      knownMessageIds: new Set([
        ...this.#knownMessageIds,
        ...this.#subagents.messages.map((message) => message.messageId),
      ]),
      newId: randomUUID,
    });
  }

  #terminalEvent(run: Run | undefined, timestamp: number): AgUiEvent {
    const terminal = this.#terminal;
    const threadId = this.#options.threadId;
    const runId = this.#runId ?? run?.operationId ?? randomUUID();
    if (terminal === undefined) {
      return {
        type: EventType.RUN_ERROR,
        timestamp,
        message: 'The run ended without saying how; its events stopped early.',
        code: 'RUN_STREAM_ENDED',
      };
    }
    const usage = tokenUsageOf(terminal.data.usage, { provider: this.#provider, modelId: this.#modelId });
    const withUsage = usage === undefined ? {} : { usage };
    switch (terminal.type) {
      case 'run_stop': {
        const output = run?.output;
        return {
          type: EventType.RUN_FINISHED,
          timestamp,
          threadId,
          runId,
          outcome: { type: 'success' },
          ...(output === undefined || output === null ? {} : { result: output }),
          ...withUsage,
        };
      }
      case 'run_cancel':
        return {
          type: EventType.RUN_FINISHED,
          timestamp,
          threadId,
          runId,
          outcome: { type: 'cancelled' },
          ...withUsage,
        };
      case 'run_suspend':
        return {
          type: EventType.RUN_FINISHED,
          timestamp,
          threadId,
          runId,
          outcome: { type: 'interrupt', interrupts: terminal.data.pendingApprovals.map(approvalInterrupt) },
          ...withUsage,
        };
      case 'run_partial':
        return runError(terminal.data.error, timestamp, withUsage, 'partial');
      case 'run_error':
        return runError(terminal.data.error, timestamp, withUsage, 'failed');
    }
  }

  #currentMessageId(): string {
    if (this.#turn === undefined) {
      this.#turn = { messageId: randomUUID(), reasoning: [], text: '', isFinished: false };
    }
    return this.#turn.messageId;
  }

  #text(out: AgUiEvent[], text: string, timestamp: number): void {
    if (text === '') return;
    this.#closeReasoning(out, timestamp);
    const messageId = this.#currentMessageId();
    if (!this.#isTextOpen) {
      this.#isTextOpen = true;
      this.#knownMessageIds.add(messageId);
      out.push({ type: EventType.TEXT_MESSAGE_START, timestamp, messageId, role: 'assistant' });
    }
    (this.#turn as { text: string }).text += text;
    out.push({ type: EventType.TEXT_MESSAGE_CONTENT, timestamp, messageId, delta: text });
  }

  #reasoning(out: AgUiEvent[], text: string, timestamp: number): void {
    if (text === '') return;
    this.#closeText(out, timestamp);
    this.#currentMessageId();
    let open = this.#openReasoning;
    if (open === undefined) {
      open = { id: randomUUID(), text: '' };
      this.#openReasoning = open;
      this.#turn?.reasoning.push(open);
      this.#knownMessageIds.add(open.id);
      out.push({ type: EventType.REASONING_START, timestamp, messageId: open.id });
      out.push({ type: EventType.REASONING_MESSAGE_START, timestamp, messageId: open.id, role: 'reasoning' });
    }
    open.text += text;
    out.push({ type: EventType.REASONING_MESSAGE_CONTENT, timestamp, messageId: open.id, delta: text });
  }

  #toolStart(out: AgUiEvent[], event: StreamEventOf<'tool_start'>): void {
    const { toolCallId, toolName, parentToolCallId, input } = event.data;
    // The model's own calls were shown while it wrote them.
    if (this.#streamedToolCallIds.has(toolCallId)) return;
    this.#closeTurnOutput(out, event.timestamp);
    let parentMessageId = this.#currentMessageId();
    const argumentsText = JSON.stringify(input ?? {}) ?? '{}';
    if (parentToolCallId !== undefined) {
      parentMessageId = this.#parentMessageIds.get(parentToolCallId) ?? parentMessageId;
      this.#parentMessageIds.set(parentToolCallId, parentMessageId);
      this.#brokeredCalls.set(toolCallId, {
        toolCallId,
        toolName,
        arguments: argumentsText,
        parentToolCallId,
        parentMessageId,
      });
    } else {
      this.#streamedToolCallIds.add(toolCallId);
    }
    this.#knownMessageIds.add(parentMessageId);
    const timestamp = event.timestamp;
    out.push({
      type: EventType.TOOL_CALL_START,
      timestamp,
      toolCallId,
      toolCallName: toolName,
      parentMessageId,
      ...(parentToolCallId === undefined ? {} : { metadata: { ghost: { parentToolCallId } } }),
    });
    out.push({ type: EventType.TOOL_CALL_ARGS, timestamp, toolCallId, delta: argumentsText });
    out.push({ type: EventType.TOOL_CALL_END, timestamp, toolCallId });
  }

  #toolStop(out: AgUiEvent[], event: StreamEventOf<'tool_stop'>): void {
    const { toolCallId, parentToolCallId, status, content, artifacts } = event.data;
    const messageId = randomUUID();
    const isError = status === 'error';
    this.#resultMessageIds.set(toolCallId, messageId);
    this.#knownMessageIds.add(messageId);
    const brokered = this.#brokeredCalls.get(toolCallId);
    if (brokered !== undefined) brokered.result = { messageId, content, isError, artifacts };
    const ghost = {
      ...(parentToolCallId === undefined ? {} : { parentToolCallId }),
      ...(isError ? { isError: true } : {}),
    };
    out.push({
      type: EventType.TOOL_CALL_RESULT,
      timestamp: event.timestamp,
      messageId,
      toolCallId,
      content: toolContentToAgUi(content, artifacts),
      role: 'tool',
      ...(Object.keys(ghost).length === 0 ? {} : { metadata: { ghost } }),
    });
  }

  #closeText(out: AgUiEvent[], timestamp: number): void {
    if (!this.#isTextOpen || this.#turn === undefined) return;
    this.#isTextOpen = false;
    out.push({ type: EventType.TEXT_MESSAGE_END, timestamp, messageId: this.#turn.messageId });
  }

  #closeReasoning(out: AgUiEvent[], timestamp: number): void {
    const open = this.#openReasoning;
    if (open === undefined) return;
    this.#openReasoning = undefined;
    out.push({ type: EventType.REASONING_MESSAGE_END, timestamp, messageId: open.id });
    out.push({ type: EventType.REASONING_END, timestamp, messageId: open.id });
  }

  /** Closes what a turn's output may leave open: reasoning, text, and tool calls the model was writing. */
  #closeTurnOutput(out: AgUiEvent[], timestamp: number): void {
    this.#closeReasoning(out, timestamp);
    this.#closeText(out, timestamp);
    for (const toolCallId of this.#openToolCalls) {
      out.push({ type: EventType.TOOL_CALL_END, timestamp, toolCallId });
    }
    this.#openToolCalls.clear();
  }

  #closeStep(out: AgUiEvent[], timestamp: number): void {
    if (!this.#isStepOpen) return;
    this.#isStepOpen = false;
    out.push({ type: EventType.STEP_FINISHED, timestamp, stepName: stepNameOf(this.#turnNumber) });
  }
}

function runError(
  error: ErrorSummary,
  timestamp: number,
  usage: { usage?: ReturnType<typeof tokenUsageOf> },
  outcome: 'failed' | 'partial',
): AgUiEvent {
  return {
    type: EventType.RUN_ERROR,
    timestamp,
    message: error.message,
    code: error.code ?? (outcome === 'partial' ? 'RUN_DEADLINE_EXCEEDED' : 'RUN_FAILED'),
    ...(usage.usage === undefined ? {} : { usage: usage.usage }),
    metadata: { ghost: { outcome, errorName: error.name } },
  };
}
