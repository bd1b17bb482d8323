import { canonicalJson } from './canonical-json.js';
import { ConfigurationError } from './errors.js';
import { GhostError } from './ghost-error.js';
import type { JsonObject } from './json.js';
import { toJsonValue } from './json-value.js';
import { randomUUID, sha256Hex } from './lazy-builtins.js';
import type { ModelMessage } from './model.js';
import { SessionLimitError, SessionStoreError } from './session-errors.js';
import { checkSessionActor, checkSessionId, checkSessionOperationId } from './session-identity.js';
import { decodeSessionMessage, encodeSessionMessage } from './session-message-codec.js';
import type {
  OpenedSessionV1,
  SessionRecord,
  SessionStoreV1,
  SessionTurnOutcome,
  SessionWrite,
} from './session-store.js';

/** How long a run waits for another run to release its session, unless told otherwise. */
export const defaultSessionLockTimeoutMs = 30_000;

/**
 * The session a run continues: `agent.ask(input, { session: { id, actor } })`. The runtime's session
 * store (`createRuntime({ sessionStore })`) keeps it.
 */
export interface SessionOptions {
  /** The conversation's id: 1 to 256 printable characters. Make it unguessable, such as a UUID. */
  readonly id: string;
  /**
   * The trusted owner the application vouches for (the signed-in user, a tenant): never take it from
   * model or user input. Another actor cannot open the session (`SessionAccessError`).
   */
  readonly actor: string;
  /**
   * How many of the newest stored messages the model sees before the new input (trimmed to start at
   * a user message). Default: the whole history, up to the store's `maxMessages`.
   */
  readonly historyLimit?: number;
  /** How long to wait for another run on the same session to end. Default 30,000. */
  readonly lockTimeoutMs?: number;
}

/** One message of a session's history, as `run.session.history()` returns it. */
export interface SessionEntry {
  /** Its place in the history, from 0; pass it as `before` to read the page before it. */
  readonly position: number;
  readonly message: ModelMessage;
  /** The run id of the turn that wrote it, or the `operationId` given to `append`. */
  readonly operationId: string;
  /** For a message of a run's turn, how that run ended. */
  readonly outcome?: SessionTurnOutcome;
  readonly createdAt: Date;
}

const sessionOptionKeys = new Set(['id', 'actor', 'historyLimit', 'lockTimeoutMs']);

/** The session options of `ask`, checked (the store is found when the run starts). */
export interface CheckedSessionOptions {
  readonly id: string;
  readonly actor: string;
  readonly historyLimit: number | undefined;
  readonly lockTimeoutMs: number;
}

/** Checks `ask`'s `session` option; throws a `ConfigurationError` (`SESSION_OPTION_INVALID`). */
export function checkSessionOptions(options: unknown): CheckedSessionOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new ConfigurationError(
      'ask() takes session as { id, actor }, such as { id: chatId, actor: userId }.',
      {
        code: 'SESSION_OPTION_INVALID',
        option: 'session',
      },
    );
  }
  for (const key of Object.keys(options)) {
    if (!sessionOptionKeys.has(key)) {
      throw new ConfigurationError(
        `ask()'s session has no option '${key}'. Known options: ${[...sessionOptionKeys].join(', ')}.`,
        { code: 'OPTION_UNKNOWN', option: `session.${key}`, known: [...sessionOptionKeys] },
      );
    }
  }
  const { id, actor, historyLimit, lockTimeoutMs } = options as SessionOptions;
  if (historyLimit !== undefined && (!Number.isSafeInteger(historyLimit) || historyLimit < 0)) {
    throw new ConfigurationError(
      `session.historyLimit must be a whole number, 0 or more; got ${historyLimit}.`,
      {
        code: 'SESSION_OPTION_INVALID',
        option: 'session.historyLimit',
      },
    );
  }
  const timeout = lockTimeoutMs ?? defaultSessionLockTimeoutMs;
  if (typeof timeout !== 'number' || !Number.isFinite(timeout) || timeout < 0) {
    throw new ConfigurationError(
      `session.lockTimeoutMs must be milliseconds, 0 or more; got ${String(timeout)}.`,
      {
        code: 'SESSION_OPTION_INVALID',
        option: 'session.lockTimeoutMs',
      },
    );
  }
  return {
    id: checkSessionId(id),
    actor: checkSessionActor(actor),
    historyLimit,
    lockTimeoutMs: timeout,
  };
}

function digestOf(write: Omit<SessionWrite, 'digest' | 'operationId'>): string {
  return sha256Hex(canonicalJson(write));
}

/**
 * A run's session, as `run.session` and a tool's `context.run.session`: its id and owner, the state
 * saved with each turn, and the history. The run holds the session for as long as it runs, so
 * nothing else writes to it meanwhile.
 */
export interface RunSession {
  readonly id: string;
  readonly actor: string;
  /** The name of the store that keeps it, such as `sqlite`. */
  readonly storeName: string;
  /**
   * The session's state: a JSON object loaded with the session, merged into the run's
   * `invocation.context` (under the invocation's own context), and saved with the run's turn.
   * Change it freely during the run; keep it JSON.
   */
  readonly state: JsonObject;
  /** Messages stored so far (including what `append` added during this run). */
  readonly messageCount: number;
  /**
   * The newest `limit` messages (default 50) stored before position `before` (default: the end),
   * oldest first. Page back by passing the first entry's `position` as `before`.
   */
  history(options?: { readonly limit?: number; readonly before?: number }): Promise<readonly SessionEntry[]>;
  /**
   * Appends messages now, in one atomic write. Idempotent: a second call with the same `operationId`
   * and the same messages succeeds without writing again; with other messages it fails with
   * `SessionConflictError`. They land before this run's own turn, which is written when the run ends.
   */
  append(messages: readonly ModelMessage[], options: { readonly operationId: string }): Promise<void>;
  /**
   * Replaces the newest messages, if they are still `expectedTail` (compare-and-swap): say, a long
   * stretch of history replaced by a summary. When the tail has moved, fails with
   * `SessionConflictError` (`reason: 'tail-moved'`) and changes nothing. `expectedTail` is compared
   * as stored, so pass messages read with `history()`.
   */
  replace(options: {
    readonly expectedTail: readonly ModelMessage[];
    readonly messages: readonly ModelMessage[];
    readonly operationId?: string;
  }): Promise<void>;
}

/** The run's side of its session: {@link RunSession} plus what only the run does with it. */
export class OpenedRunSession implements RunSession {
  readonly id: string;
  readonly actor: string;
  /** The name of the store that keeps it, such as `sqlite`. */
  readonly storeName: string;
  /**
   * The session's state: a JSON object loaded with the session, merged into the run's
   * `invocation.context` (under the invocation's own context), and saved with the run's turn.
   * Change it freely during the run; keep it JSON.
   */
  readonly state: JsonObject;
  readonly #handle: OpenedSessionV1;
  readonly #maxMessageBytes: number;

  /** @internal Opened by the run. */
  constructor(store: SessionStoreV1, handle: OpenedSessionV1) {
    this.id = handle.id;
    this.actor = handle.actor;
    this.storeName = store.name;
    this.state = structuredClone(handle.state);
    this.#handle = handle;
    this.#maxMessageBytes = store.limits.maxMessageBytes;
  }

  /** Messages stored so far (including what `append` added during this run). */
  get messageCount(): number {
    return this.#handle.messageCount;
  }

  /**
   * The newest `limit` messages (default 50) stored before position `before` (default: the end),
   * oldest first. Page back by passing the first entry's `position` as `before`.
   */
  async history(
    options: { readonly limit?: number; readonly before?: number } = {},
  ): Promise<readonly SessionEntry[]> {
    const limit = options.limit ?? 50;
    if (!Number.isSafeInteger(limit) || limit < 0) {
      throw new ConfigurationError(`history() takes a limit of 0 or more, got ${String(limit)}.`, {
        code: 'SESSION_OPTION_INVALID',
        option: 'limit',
      });
    }
    const { before } = options;
    if (before !== undefined && (!Number.isSafeInteger(before) || before < 0)) {
      throw new ConfigurationError(
        `history() takes before as a position (0 or more), got ${String(before)}.`,
        {
          code: 'SESSION_OPTION_INVALID',
          option: 'before',
        },
      );
    }
    if (limit === 0) return [];
    const records = await this.#read(() =>
      this.#handle.history(before === undefined ? { limit } : { limit, before }),
    );
    return records.map((record) => this.#entry(record));
  }

  /**
   * Appends messages now, in one atomic write. Idempotent: a second call with the same `operationId`
   * and the same messages succeeds without writing again; with other messages it fails with
   * `SessionConflictError`. They land before this run's own turn, which is written when the run ends.
   */
  async append(messages: readonly ModelMessage[], options: { readonly operationId: string }): Promise<void> {
    const operationId = checkSessionOperationId(options?.operationId);
    await this.write({ operationId, messages });
  }

  /**
   * Replaces the newest messages, if they are still `expectedTail` (compare-and-swap): say, a long
   * stretch of history replaced by a summary. When the tail has moved, fails with
   * `SessionConflictError` (`reason: 'tail-moved'`) and changes nothing. `expectedTail` is compared
   * as stored, so pass messages read with `history()`.
   */
  async replace(options: {
    readonly expectedTail: readonly ModelMessage[];
    readonly messages: readonly ModelMessage[];
    readonly operationId?: string;
  }): Promise<void> {
    const operationId = checkSessionOperationId(options?.operationId ?? randomUUID());
    if (!Array.isArray(options.expectedTail)) {
      throw new ConfigurationError(
        'replace() takes expectedTail, the messages now at the end of the history.',
        {
          code: 'SESSION_OPTION_INVALID',
          option: 'expectedTail',
        },
      );
    }
    const expected = options.expectedTail.map((message, index) =>
      encodeSessionMessage(message, `expectedTail[${index}]`),
    );
    await this.write({
      operationId,
      messages: options.messages,
      replaceFrom: { position: this.#handle.messageCount - expected.length, expected },
    });
  }

  /** @internal One write: encode, check the message size here, let the store check the rest. */
  async write(write: {
    readonly operationId: string;
    readonly messages: readonly ModelMessage[];
    readonly replaceFrom?: SessionWrite['replaceFrom'];
    readonly state?: JsonObject;
    readonly outcome?: SessionTurnOutcome;
    readonly pause?: string | null;
  }): Promise<void> {
    if (!Array.isArray(write.messages)) {
      throw new ConfigurationError('A session write takes an array of messages.', {
        code: 'SESSION_MESSAGE_INVALID',
      });
    }
    const messages = write.messages.map((message, index) =>
      encodeSessionMessage(message, `Message ${index + 1}`),
    );
    const maxMessageBytes = this.#maxMessageBytes;
    for (const [index, text] of messages.entries()) {
      const bytes = Buffer.byteLength(text, 'utf8');
      if (bytes > maxMessageBytes) {
        throw new SessionLimitError(
          `Message ${index + 1} is ${bytes} bytes as stored, over the session limit maxMessageBytes (${maxMessageBytes}). Nothing was written; make it (or the tool result) smaller, or raise the store's limit.`,
          { limit: 'maxMessageBytes', size: bytes, max: maxMessageBytes, sessionId: this.id },
        );
      }
    }
    const content: Omit<SessionWrite, 'digest' | 'operationId'> = {
      messages,
      ...(write.replaceFrom === undefined ? {} : { replaceFrom: write.replaceFrom }),
      ...(write.state === undefined ? {} : { state: write.state }),
      ...(write.outcome === undefined ? {} : { outcome: write.outcome }),
      ...(write.pause === undefined ? {} : { pause: write.pause }),
    };
    await this.#read(() =>
      this.#handle.write({ operationId: write.operationId, digest: digestOf(content), ...content }),
    );
  }

  /** @internal The state to save with the turn, checked to be JSON. */
  stateToSave(): JsonObject {
    const converted = toJsonValue(this.state);
    if (!converted.ok) {
      throw new ConfigurationError(
        `run.session.state cannot be saved: ${converted.problem.replace('the result', 'the state')}. Keep the state JSON.`,
        { code: 'SESSION_MESSAGE_INVALID', option: 'session.state' },
      );
    }
    return converted.value as JsonObject;
  }

  /** @internal Releases the session's lock. */
  release(): Promise<void> {
    return this.#handle.release();
  }

  #entry(record: SessionRecord): SessionEntry {
    return {
      position: record.position,
      message: this.#decode(record),
      operationId: record.operationId,
      ...(record.outcome === undefined ? {} : { outcome: record.outcome }),
      createdAt: record.createdAt,
    };
  }

  /** @internal A stored message, or a `SessionStoreError` naming the store and the position. */
  decode(record: SessionRecord): ModelMessage {
    return this.#decode(record);
  }

  #decode(record: SessionRecord): ModelMessage {
    try {
      return decodeSessionMessage(record.message);
    } catch (error) {
      throw new SessionStoreError(
        `Session store '${this.storeName}' returned an unreadable message at position ${record.position} of session '${this.id}': ${(error as Error).message}. The stored row is corrupt; delete the session or repair the row.`,
        { store: this.storeName, reason: 'corrupt', sessionId: this.id, cause: error },
      );
    }
  }

  /** Runs a store call, turning a driver's raw failure into a `SessionStoreError` naming the store. */
  async #read<Value>(call: () => Promise<Value>): Promise<Value> {
    try {
      return await call();
    } catch (error) {
      throw asSessionError(error, this.storeName, this.id);
    }
  }
}

/** A store's failure as a Ghost error: Ghost's own errors pass through; anything else is wrapped. */
export function asSessionError(error: unknown, storeName: string, sessionId: string): Error {
  if (GhostError.isInstance(error)) return error;
  if (error instanceof Error && error.name === 'AbortError') return error;
  const message = error instanceof Error ? error.message : String(error);
  return new SessionStoreError(
    `Session store '${storeName}' failed on session '${sessionId}': ${message}. Check that its storage is reachable; nothing was written half-way.`,
    { store: storeName, reason: 'unavailable', sessionId, cause: error },
  );
}

/**
 * The window of history a run starts from: the newest records, from the first user message among
 * them (a window that began with tool results or a model answer would be refused by providers).
 */
export function historyWindow(session: OpenedRunSession, records: readonly SessionRecord[]): ModelMessage[] {
  const messages = records.map((record) => session.decode(record));
  const start = messages.findIndex((message) => message.role === 'user');
  return start < 0 ? [] : messages.slice(start);
}

/**
 * What a run writes as its turn: everything after the history for a completed run; for a run that
 * ended early, its input and the model answers it finished with all their tool results, or nothing
 * when it finished none (so retrying the same input does not repeat it). See `docs/guides/sessions.md`.
 */
export function turnToWrite(
  turnMessages: readonly ModelMessage[],
  inputLength: number,
  outcome: SessionTurnOutcome,
): readonly ModelMessage[] {
  if (outcome === 'completed') return turnMessages;
  let end = 0;
  let unanswered = new Set<string>();
  let hasAnswer = false;
  for (const [index, message] of turnMessages.entries()) {
    if (message.role === 'assistant') {
      unanswered = new Set((message.toolCalls ?? []).map((call) => call.id));
      if (index >= inputLength && unanswered.size === 0) {
        hasAnswer = true;
        end = index + 1;
      }
    } else if (message.role === 'tool') {
      unanswered.delete(message.toolCallId);
      if (index >= inputLength && unanswered.size === 0) {
        hasAnswer = true;
        end = index + 1;
      }
    } else if (unanswered.size === 0 && index >= inputLength && hasAnswer) {
      end = index + 1; // an interjection after a finished answer
    }
  }
  return hasAnswer ? turnMessages.slice(0, Math.max(end, inputLength)) : [];
}
