import { canonicalJson } from '../canonical-json.js';
import type { JsonObject } from '../json.js';
import { SessionLimitError } from '../session-errors.js';
import type { SessionLimits } from '../session-store.js';

/** A session's size before a write: what the store has counted. */
export interface SessionTotals {
  readonly messageCount: number;
  readonly byteCount: number;
}

/** What a write changes, as {@link planSessionWrite} needs it. */
export interface SessionWriteChange {
  /** How many stored messages the write removes (`replaceFrom`'s tail), and their bytes. */
  readonly removedCount: number;
  readonly removedBytes: number;
  readonly messages: readonly string[];
  readonly state?: JsonObject | undefined;
  /** The write's paused run (`SessionWrite.pause`): text to keep, `null` to remove, absent to leave. */
  readonly pause?: string | null | undefined;
}

/** A write's sizes, checked against the limits. */
export interface SessionWritePlan extends SessionTotals {
  /** UTF-8 bytes of each added message, in order: stores keep them to count later removals. */
  readonly messageBytes: readonly number[];
  /** The state as JSON text, when the write changes it. */
  readonly stateText: string | undefined;
}

/**
 * Checks a write against a session's limits and returns the session's size after it, for a store to
 * call inside its write transaction (with the totals it has counted) before it writes anything.
 * Throws a `SessionLimitError` naming the first limit the write would pass and the size.
 *
 * @example
 * ```ts
 * const change = { removedCount, removedBytes, messages, state, pause };
 * const plan = planSessionWrite(store.limits, current, change, id);
 * // insert messages with plan.messageBytes, then store plan.messageCount and plan.byteCount
 * ```
 */
export function planSessionWrite(
  limits: SessionLimits,
  current: SessionTotals,
  change: SessionWriteChange,
  sessionId?: string,
): SessionWritePlan {
  const idFacts = sessionId === undefined ? {} : { sessionId };
  const messageBytes = change.messages.map((message) => Buffer.byteLength(message, 'utf8'));
  for (const [index, bytes] of messageBytes.entries()) {
    if (bytes > limits.maxMessageBytes) {
      throw new SessionLimitError(
        `Message ${index + 1} of this write is ${bytes} bytes, over the session limit maxMessageBytes (${limits.maxMessageBytes}). Nothing was written; make the message (or the tool result) smaller, or raise the store's limit.`,
        { limit: 'maxMessageBytes', size: bytes, max: limits.maxMessageBytes, ...idFacts },
      );
    }
  }
  const messageCount = current.messageCount - change.removedCount + change.messages.length;
  if (messageCount > limits.maxMessages) {
    throw new SessionLimitError(
      `This write would bring the session to ${messageCount} messages, over its limit maxMessages (${limits.maxMessages}). Nothing was written; start a new session, trim the history with run.session.replace(), or raise the store's limit.`,
      { limit: 'maxMessages', size: messageCount, max: limits.maxMessages, ...idFacts },
    );
  }
  let byteCount = current.byteCount - change.removedBytes;
  for (const bytes of messageBytes) byteCount += bytes;
  if (byteCount > limits.maxSessionBytes) {
    throw new SessionLimitError(
      `This write would bring the session to ${byteCount} bytes, over its limit maxSessionBytes (${limits.maxSessionBytes}). Nothing was written; start a new session, trim the history with run.session.replace(), or raise the store's limit.`,
      { limit: 'maxSessionBytes', size: byteCount, max: limits.maxSessionBytes, ...idFacts },
    );
  }
  const stateText = change.state === undefined ? undefined : canonicalJson(change.state);
  if (stateText !== undefined) {
    const stateBytes = Buffer.byteLength(stateText, 'utf8');
    if (stateBytes > limits.maxStateBytes) {
      throw new SessionLimitError(
        `The session's state would be ${stateBytes} bytes as JSON, over its limit maxStateBytes (${limits.maxStateBytes}). Nothing was written; keep large data out of run.session.state, or raise the store's limit.`,
        { limit: 'maxStateBytes', size: stateBytes, max: limits.maxStateBytes, ...idFacts },
      );
    }
  }
  if (typeof change.pause === 'string') {
    const pauseBytes = Buffer.byteLength(change.pause, 'utf8');
    if (pauseBytes > limits.maxPauseBytes) {
      throw new SessionLimitError(
        `The paused run would be ${pauseBytes} bytes as JSON, over the session limit maxPauseBytes (${limits.maxPauseBytes}). Nothing was written; keep large data out of what the waiting run holds (its tool calls and results), or raise the store's limit.`,
        { limit: 'maxPauseBytes', size: pauseBytes, max: limits.maxPauseBytes, ...idFacts },
      );
    }
  }
  return { messageCount, byteCount, messageBytes, stateText };
}
