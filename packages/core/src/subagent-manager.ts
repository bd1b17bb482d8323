import type { TObject } from 'typebox';
import { CancelledError, DeadlineExceededError, ToolError } from './errors.js';
import type { ModelMessage } from './model.js';
import { type InterjectionInbox, runNestedAgent } from './nested-agent.js';
import type { PendingInterjection, RunExecution } from './run.js';
import type { RunContext } from './run-context.js';
import {
  asSessionError,
  defaultSessionLockTimeoutMs,
  historyWindow,
  OpenedRunSession,
} from './run-session.js';
import { checkSessionId } from './session-identity.js';
import type { ErrorSummary, SubagentEventData } from './stream-event.js';
import type { CheckedSubagent } from './subagent-definition.js';
import { defineTool, type Tool, type ToolContext } from './tool.js';
import { summarizeError } from './tool-call-runner.js';

/** The limits a subagent manager applies, from its agent's `AgentLimits`. */
export interface SubagentLimits {
  readonly maxLiveSubagents: number;
  readonly maxSubagents: number;
  readonly maxQueuedSubagentMessages: number;
  readonly subagentWaitMs: number;
}

/** Characters of one task or message the model sends a subagent. */
const maxSubagentMessageChars = 50_000;
/** Characters of a subagent's answer the model (and a `subagent` event) reads; the rest is cut. */
const maxSubagentResponseChars = 100_000;
/** Turns one subagent may take (one per message). */
const maxSubagentTurns = 100;
const taskNamePattern = /^[a-z0-9_]+$/;
const maxTaskNameChars = 40;
const maxCursorBytes = 512;
const maxListLimit = 100;
const defaultListLimit = 20;
/** How long a sync `spawn_subagent` may wait for the first answer (the run's deadline applies too). */
const spawnTimeoutMs = 600_000;

type SubagentStatus = 'working' | 'idle' | 'failed' | 'cancelled';

/** One subagent: its conversation, the messages waiting for it, and its latest answers. */
interface Subagent {
  readonly id: string;
  readonly definition: CheckedSubagent;
  status: SubagentStatus;
  history: readonly ModelMessage[];
  readonly queue: string[];
  /** Interjections waiting for the running turn's next model turn. */
  inbox: PendingInterjection[];
  turns: number;
  response: string | undefined;
  previousResponse: string | undefined;
  error: ErrorSummary | undefined;
  /** The running turn; settles (never rejects) once it ended and its events are out. */
  current: Promise<void> | undefined;
  session: OpenedRunSession | undefined;
}

/** What the model reads about one subagent. */
interface SubagentReport {
  readonly subagent_id: string;
  readonly kind: string;
  readonly status: SubagentStatus;
  readonly turns: number;
  readonly queued_messages: number;
  readonly response?: string;
  readonly previous_response?: string;
  readonly error?: string;
}

function requestInvalid(message: string): ToolError {
  return new ToolError(message, { code: 'SUBAGENT_REQUEST_INVALID' });
}

function limitReached(message: string): ToolError {
  return new ToolError(message, { code: 'SUBAGENT_LIMIT_REACHED' });
}

function cut(text: string): string {
  return text.length <= maxSubagentResponseChars
    ? text
    : `${text.slice(0, maxSubagentResponseChars)}\n[cut at ${maxSubagentResponseChars} characters]`;
}

function checkMessage(text: unknown, field: string): string {
  if (typeof text !== 'string' || text.trim() === '') {
    throw requestInvalid(`${field} must be a non-empty string.`);
  }
  if (text.length > maxSubagentMessageChars) {
    throw requestInvalid(
      `${field} has ${text.length} characters; send at most ${maxSubagentMessageChars}: summarise, or split the work.`,
    );
  }
  return text;
}

function encodeCursor(offset: number): string {
  return Buffer.from(`offset:${offset}`, 'utf8').toString('base64url');
}

function decodeCursor(cursor: unknown): number {
  if (typeof cursor !== 'string' || Buffer.byteLength(cursor, 'utf8') > maxCursorBytes) {
    throw requestInvalid(
      `cursor must be the next_cursor of an earlier list_subagents answer (at most ${maxCursorBytes} bytes).`,
    );
  }
  const match = /^offset:(\d{1,6})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (match === null) {
    throw requestInvalid('cursor is not a next_cursor list_subagents gave; call it without a cursor.');
  }
  return Number(match[1]);
}

/** The plain JSON Schemas of the control tools (importing `@ghost/core` loads no typebox module). */
function objectSchema(properties: Record<string, unknown>, required: readonly string[]): TObject {
  return Object.freeze({ type: 'object', required: [...required], properties }) as unknown as TObject;
}

/**
 * The subagents of one invocation of an agent with `subagents`: gives the model its control
 * tools, runs each subagent's turns nested in the run, and cancels them all when the invocation
 * ends (the closer it registers on the invocation).
 */
export class SubagentManager {
  readonly #agentName: string;
  readonly #definitions: ReadonlyMap<string, CheckedSubagent>;
  readonly #limits: SubagentLimits;
  readonly #execution: RunExecution;
  readonly #runContext: RunContext;
  readonly #controller = new AbortController();
  readonly #subagents = new Map<string, Subagent>();
  #listeners = new Set<() => void>();
  #isClosed = false;

  constructor(
    agentName: string,
    definitions: ReadonlyMap<string, CheckedSubagent>,
    limits: SubagentLimits,
    execution: RunExecution,
  ) {
    this.#agentName = agentName;
    this.#definitions = definitions;
    this.#limits = limits;
    this.#execution = execution;
    this.#runContext = execution.runContext;
    execution.register(() => this.close());
  }

  /** The control tools the model gets: never part of a code-mode program's catalog. */
  tools(): Tool[] {
    return [this.#spawnTool(), this.#sendTool(), this.#interjectTool(), this.#waitTool(), this.#listTool()];
  }

  /** Cancels every subagent still working or waiting, and waits until their turns ended. */
  async close(): Promise<void> {
    if (this.#isClosed) return;
    this.#isClosed = true;
    this.#controller.abort(
      new CancelledError(`Agent '${this.#agentName}' ended, so its subagents were cancelled.`),
    );
    const running: Promise<void>[] = [];
    for (const subagent of this.#subagents.values()) {
      if (subagent.current !== undefined) {
        running.push(subagent.current);
      } else if (subagent.queue.length > 0) {
        subagent.queue.length = 0;
        this.#cancel(subagent, this.#controller.signal.reason);
      }
    }
    await Promise.all(running);
    const sessions = [...this.#subagents.values()].flatMap((subagent) => subagent.session ?? []);
    await Promise.all(sessions.map((session) => session.release().catch(() => {})));
    this.#notify();
  }

  #emit(data: SubagentEventData): void {
    this.#execution.emit('subagent', data);
  }

  #liveCount(): number {
    let live = 0;
    for (const subagent of this.#subagents.values()) if (subagent.status === 'working') live += 1;
    return live;
  }

  #checkOpen(): void {
    if (this.#isClosed) throw requestInvalid(`Agent '${this.#agentName}' has ended; no subagent can start.`);
  }

  #checkLive(): void {
    const max = this.#limits.maxLiveSubagents;
    if (this.#liveCount() >= max) {
      throw limitReached(
        `${max} subagents are already working, the most that may work at once (limits.maxLiveSubagents). Call wait_for_subagents, then try again.`,
      );
    }
  }

  #find(id: unknown): Subagent {
    const subagent = typeof id === 'string' ? this.#subagents.get(id) : undefined;
    if (subagent === undefined) {
      const known = [...this.#subagents.keys()];
      throw requestInvalid(
        `No subagent has the id ${JSON.stringify(id)}. ${known.length === 0 ? 'None has been spawned yet.' : `Known ids: ${known.join(', ')}.`}`,
      );
    }
    return subagent;
  }

  #report(subagent: Subagent): SubagentReport {
    return {
      subagent_id: subagent.id,
      kind: subagent.definition.kind,
      status: subagent.status,
      turns: subagent.turns,
      queued_messages: subagent.queue.length,
      ...(subagent.response !== undefined ? { response: subagent.response } : {}),
      ...(subagent.previousResponse !== undefined ? { previous_response: subagent.previousResponse } : {}),
      ...(subagent.error !== undefined ? { error: subagent.error.message } : {}),
    };
  }

  #notify(): void {
    const listeners = this.#listeners;
    this.#listeners = new Set();
    for (const listener of listeners) listener();
  }

  /** Resolves at the next change of any subagent, after `timeoutMs`, or when `signal` aborts. */
  #nextChange(timeoutMs: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.#listeners.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      signal.addEventListener('abort', done, { once: true });
      this.#listeners.add(done);
    });
  }

  async #spawn(
    input: { kind: string; task_name: string; task: string; mode: 'sync' | 'async' },
    context: ToolContext,
  ): Promise<SubagentReport> {
    this.#checkOpen();
    const definition = this.#definitions.get(input.kind);
    if (definition === undefined) {
      throw requestInvalid(
        `No subagent kind is named ${JSON.stringify(input.kind)}. Kinds: ${[...this.#definitions.keys()].join(', ')}.`,
      );
    }
    const taskName = input.task_name;
    if (
      typeof taskName !== 'string' ||
      !taskNamePattern.test(taskName) ||
      taskName.length > maxTaskNameChars
    ) {
      throw requestInvalid(
        `task_name must be 1 to ${maxTaskNameChars} lowercase letters, digits or '_', such as 'compare_prices'.`,
      );
    }
    if (this.#subagents.has(taskName)) {
      throw requestInvalid(
        `A subagent named '${taskName}' exists already: send it a message with send_message_to_subagent, or spawn one with another task_name.`,
      );
    }
    const task = checkMessage(input.task, 'task');
    if (input.mode !== 'sync' && input.mode !== 'async')
      throw requestInvalid("mode must be 'sync' or 'async'.");
    if (this.#subagents.size >= this.#limits.maxSubagents) {
      throw limitReached(
        `This agent has spawned ${this.#limits.maxSubagents} subagents, the most it may (limits.maxSubagents). Send a message to one of them instead.`,
      );
    }
    this.#checkLive();
    const subagent: Subagent = {
      id: taskName,
      definition,
      status: 'working',
      history: [],
      queue: [],
      inbox: [],
      turns: 0,
      response: undefined,
      previousResponse: undefined,
      error: undefined,
      current: undefined,
      session: undefined,
    };
    this.#subagents.set(taskName, subagent);
    this.#emit({ phase: 'spawned', subagentId: taskName, kind: definition.kind, mode: input.mode });
    this.#startTurn(subagent, task);
    if (input.mode === 'async') return this.#report(subagent);
    await this.#settledOrAborted(subagent, context.signal);
    return this.#report(subagent);
  }

  /** Waits for the subagent's running turn; the spawn call's own stop ends the wait (the subagent goes on). */
  async #settledOrAborted(subagent: Subagent, signal: AbortSignal): Promise<void> {
    const current = subagent.current;
    if (current === undefined) return;
    let onAbort: () => void = () => {};
    const aborted = new Promise<void>((resolve) => {
      onAbort = resolve;
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      await Promise.race([current, aborted]);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    if (signal.aborted) throw signal.reason;
  }

  #startTurn(subagent: Subagent, message: string): void {
    subagent.status = 'working';
    subagent.turns += 1;
    subagent.error = undefined;
    const turn = subagent.turns;
    this.#emit({ phase: 'turn_started', subagentId: subagent.id, kind: subagent.definition.kind, turn });
    subagent.current = this.#runTurn(subagent, message, turn);
  }

  async #runTurn(subagent: Subagent, message: string, turn: number): Promise<void> {
    const { kind } = subagent.definition;
    const inbox: InterjectionInbox = {
      take: () => {
        const taken = subagent.inbox;
        subagent.inbox = [];
        return taken;
      },
      get hasPending() {
        return subagent.inbox.length > 0;
      },
    };
    try {
      if (turn === 1) await this.#resumePersisted(subagent);
      const input: ModelMessage[] = [...subagent.history, { role: 'user', content: message }];
      const nested = await runNestedAgent(this.#runContext, {
        agent: subagent.definition.agent,
        input,
        placement: `subagent:${subagent.id}`,
        signal: this.#controller.signal,
        interjections: inbox,
      });
      const messages = nested.result.messages;
      await subagent.session?.write({
        operationId: nested.invocationId,
        messages: messages.slice(subagent.history.length),
        state: subagent.session.stateToSave(),
        outcome: 'completed',
      });
      subagent.history = messages;
      subagent.previousResponse = subagent.response;
      subagent.response = cut(nested.result.text);
      subagent.status = 'idle';
      this.#emit({
        phase: 'turn_finished',
        subagentId: subagent.id,
        kind,
        turn,
        response: subagent.response,
      });
    } catch (error) {
      if (this.#isStopped(error)) {
        subagent.current = undefined;
        this.#cancel(subagent, this.#stopReason(error));
      } else {
        subagent.status = 'failed';
        subagent.error = summarizeError(error);
        this.#emit({ phase: 'turn_failed', subagentId: subagent.id, kind, turn, error: subagent.error });
      }
    }
    subagent.current = undefined;
    // Interjections that came after the turn's last model turn wait for the next turn, first.
    const late = inbox.take();
    for (const interjection of late) interjection.resolve('');
    subagent.queue.unshift(...late.map((interjection) => interjection.message));
    this.#startNextQueued(subagent);
    this.#notify();
  }

  #startNextQueued(subagent: Subagent): void {
    if (subagent.status === 'cancelled' || subagent.queue.length === 0) return;
    if (this.#isClosed) {
      subagent.queue.length = 0;
      this.#cancel(subagent, this.#controller.signal.reason);
      return;
    }
    const next = subagent.queue.shift() as string;
    if (subagent.turns >= maxSubagentTurns) {
      subagent.queue.length = 0;
      return;
    }
    this.#startTurn(subagent, next);
  }

  #isStopped(error: unknown): boolean {
    return (
      this.#controller.signal.aborted ||
      this.#runContext.signal.aborted ||
      CancelledError.isInstance(error) ||
      DeadlineExceededError.isInstance(error)
    );
  }

  #stopReason(error: unknown): unknown {
    if (this.#runContext.signal.aborted) return this.#runContext.signal.reason;
    if (this.#controller.signal.aborted) return this.#controller.signal.reason;
    return error;
  }

  #cancel(subagent: Subagent, reason: unknown): void {
    if (subagent.status === 'cancelled') return;
    subagent.status = 'cancelled';
    subagent.error = summarizeError(reason);
    this.#emit({
      phase: 'cancelled',
      subagentId: subagent.id,
      kind: subagent.definition.kind,
      error: subagent.error,
    });
  }

  /**
   * For a persisted kind in a run with a session: opens the subagent's own session
   * (`<session id>/subagents/<task_name>`, the same actor) and continues its history.
   */
  async #resumePersisted(subagent: Subagent): Promise<void> {
    const parentSession = this.#runContext.session;
    const store = this.#execution.runtime.sessionStore;
    if (!subagent.definition.isPersisted || parentSession === undefined || store === undefined) return;
    const id = `${parentSession.id}/subagents/${subagent.id}`;
    try {
      checkSessionId(id);
    } catch {
      throw requestInvalid(
        `Subagent '${subagent.id}' cannot be kept in this session: its session id would be too long. Use a shorter task_name.`,
      );
    }
    let handle: Awaited<ReturnType<typeof store.open>>;
    try {
      handle = await store.open({
        id,
        actor: parentSession.actor,
        lockTimeoutMs: defaultSessionLockTimeoutMs,
        signal: this.#controller.signal,
      });
    } catch (error) {
      throw asSessionError(error, store.name, id);
    }
    const session = new OpenedRunSession(store, handle);
    subagent.session = session;
    if (handle.messageCount === 0) return;
    try {
      const records = await handle.history({ limit: store.limits.maxMessages });
      subagent.history = historyWindow(session, records);
    } catch (error) {
      throw asSessionError(error, store.name, id);
    }
  }

  #spawnTool(): Tool {
    const kinds = [...this.#definitions.values()];
    const description = [
      'Starts a subagent on a task: it works on its own, with its own conversation, and answers when done.',
      "mode 'sync' waits for its first answer; 'async' returns at once (call wait_for_subagents later).",
      'Send it follow-ups with send_message_to_subagent. Its id is its task_name. Kinds:',
      ...kinds.map((kind) => `- ${kind.kind}: ${kind.description}`),
    ].join('\n');
    return defineTool({
      name: 'spawn_subagent',
      description,
      input: objectSchema(
        {
          kind: { type: 'string', enum: kinds.map((kind) => kind.kind), description: 'Which subagent.' },
          task_name: {
            type: 'string',
            pattern: '^[a-z0-9_]+$',
            maxLength: maxTaskNameChars,
            description: 'A short name for the task, unique here: lowercase letters, digits and _.',
          },
          task: {
            type: 'string',
            description: 'The whole task: the subagent does not see this conversation.',
          },
          mode: { type: 'string', enum: ['sync', 'async'] },
        },
        ['kind', 'task_name', 'task', 'mode'],
      ),
      timeoutMs: spawnTimeoutMs,
      execute: (input, context) =>
        this.#spawn(
          input as { kind: string; task_name: string; task: string; mode: 'sync' | 'async' },
          context,
        ),
    });
  }

  #sendTool(): Tool {
    return defineTool({
      name: 'send_message_to_subagent',
      description:
        'Sends a subagent a follow-up message: it answers it in its next turn, after the messages sent before (first in, first out). Returns at once; call wait_for_subagents for the answer.',
      input: objectSchema({ subagent_id: { type: 'string' }, message: { type: 'string' } }, [
        'subagent_id',
        'message',
      ]),
      execute: (input) => {
        const { subagent_id, message } = input as { subagent_id: string; message: string };
        this.#checkOpen();
        const subagent = this.#find(subagent_id);
        const text = checkMessage(message, 'message');
        if (subagent.status === 'cancelled') {
          throw requestInvalid(`Subagent '${subagent.id}' was cancelled; spawn a new one.`);
        }
        if (subagent.turns + subagent.queue.length >= maxSubagentTurns) {
          throw limitReached(
            `Subagent '${subagent.id}' has had its ${maxSubagentTurns} turns; spawn a new one with a summary of what it found.`,
          );
        }
        const max = this.#limits.maxQueuedSubagentMessages;
        if (subagent.queue.length >= max) {
          throw limitReached(
            `Subagent '${subagent.id}' already has ${max} messages waiting (limits.maxQueuedSubagentMessages). Call wait_for_subagents first.`,
          );
        }
        if (subagent.status !== 'working') this.#checkLive();
        subagent.queue.push(text);
        this.#emit({
          phase: 'message_queued',
          subagentId: subagent.id,
          kind: subagent.definition.kind,
          queuedMessages: subagent.queue.length,
        });
        if (subagent.status !== 'working') this.#startNextQueued(subagent);
        return this.#report(subagent);
      },
    });
  }

  #interjectTool(): Tool {
    return defineTool({
      name: 'interject_subagent',
      description:
        'Tells a working subagent something during its current turn (a correction, a new constraint): it reads it before its next model call. For a subagent that is not working, use send_message_to_subagent.',
      input: objectSchema({ subagent_id: { type: 'string' }, message: { type: 'string' } }, [
        'subagent_id',
        'message',
      ]),
      execute: (input) => {
        const { subagent_id, message } = input as { subagent_id: string; message: string };
        const subagent = this.#find(subagent_id);
        const text = checkMessage(message, 'message');
        if (subagent.status !== 'working') {
          throw requestInvalid(
            `Subagent '${subagent.id}' is not working (it is ${subagent.status}); send it a message with send_message_to_subagent instead.`,
          );
        }
        const max = this.#limits.maxQueuedSubagentMessages;
        if (subagent.inbox.length >= max) {
          throw limitReached(
            `Subagent '${subagent.id}' already has ${max} interjections waiting (limits.maxQueuedSubagentMessages). Call wait_for_subagents first.`,
          );
        }
        // The model reads the answer through wait_for_subagents, not here.
        subagent.inbox.push({ message: text, resolve: () => {}, reject: () => {} });
        return { subagent_id: subagent.id, status: 'interjected' };
      },
    });
  }

  #waitTool(): Tool {
    const waitMs = this.#limits.subagentWaitMs;
    return defineTool({
      name: 'wait_for_subagents',
      description: `Waits until the subagents (all of them, or those in subagent_ids) have no work left, for up to ${Math.round(waitMs / 1000)} seconds, and returns each one's status and latest answer (response; previous_response is the one before). status 'still_working' means some still work: call it again.`,
      input: objectSchema(
        { subagent_ids: { type: 'array', items: { type: 'string' }, maxItems: maxListLimit } },
        [],
      ),
      timeoutMs: waitMs + 60_000,
      execute: async (input, context) => {
        const { subagent_ids } = input as { subagent_ids?: string[] };
        const watched =
          subagent_ids === undefined
            ? [...this.#subagents.values()]
            : [...new Set(subagent_ids)].map((id) => this.#find(id));
        const deadline = Date.now() + waitMs;
        const isBusy = (subagent: Subagent) => subagent.status === 'working' || subagent.queue.length > 0;
        for (;;) {
          const remaining = deadline - Date.now();
          if (!watched.some(isBusy) || remaining <= 0 || context.signal.aborted) break;
          await this.#nextChange(remaining, context.signal);
        }
        if (context.signal.aborted) throw context.signal.reason;
        return {
          status: watched.some(isBusy) ? 'still_working' : 'done',
          subagents: watched.map((subagent) => this.#report(subagent)),
        };
      },
    });
  }

  #listTool(): Tool {
    return defineTool({
      name: 'list_subagents',
      description: `Lists the subagents spawned here, oldest first, with their status (no answers: wait_for_subagents gives those). At most limit (default ${defaultListLimit}, up to ${maxListLimit}) per call; pass next_cursor as cursor for the rest.`,
      input: objectSchema(
        {
          limit: { type: 'integer', minimum: 1, maximum: maxListLimit },
          cursor: { type: 'string', maxLength: maxCursorBytes },
        },
        [],
      ),
      execute: (input) => {
        const { limit, cursor } = input as { limit?: number; cursor?: string };
        const size = limit ?? defaultListLimit;
        if (!Number.isInteger(size) || size < 1 || size > maxListLimit) {
          throw requestInvalid(`limit must be a whole number from 1 to ${maxListLimit}.`);
        }
        const offset = cursor === undefined ? 0 : decodeCursor(cursor);
        const all = [...this.#subagents.values()];
        const page = all.slice(offset, offset + size).map((subagent) => {
          const { response: _response, previous_response: _previous, ...status } = this.#report(subagent);
          return status;
        });
        const next = offset + size < all.length ? { next_cursor: encodeCursor(offset + size) } : {};
        return { subagents: page, ...next };
      },
    });
  }
}
