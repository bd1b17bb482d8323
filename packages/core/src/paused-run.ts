import { canonicalJson } from './canonical-json.js';
import { sha256Hex } from './lazy-builtins.js';
import type { ModelMessage } from './model.js';
import { PausedRunError } from './run-errors.js';
import { decodeSessionMessage, encodeSessionMessage } from './session-message-codec.js';

/** The version of the paused-run format this Ghost writes and reads (`docs/guides/approvals.md`). */
const pausedRunVersion = 1;
const pausedRunFormat = 'ghost.paused-run';

/**
 * Where one tool call of the paused answer stands. `pending` waits for a decision; `approved` and
 * `rejected` were decided by a resume that has not run them yet; `started` was handed to its tool
 * (at most once: a resume never starts it again).
 */
type PausedCallStatus = 'pending' | 'approved' | 'rejected' | 'started';

/** A call of the paused answer that has no result yet. */
export interface PausedCall {
  readonly approvalId: string;
  readonly toolCallId: string;
  readonly toolName: string;
  readonly input: unknown;
  readonly status: PausedCallStatus;
  /** With `rejected`: the person's message. */
  readonly message?: string;
}

/**
 * A run paused for a person's decision, as the session store keeps it: JSON only, agents and tools
 * by name, no context and no secrets. `turn` is the run's turn so far (its input, then every
 * answer and result); the last answer's calls without a result are in `calls`.
 */
export interface PausedRun {
  /** New at every save: what a resume claims. */
  readonly pauseId: string;
  /** The run that paused first; every resume of it links back to it. */
  readonly firstRunId: string;
  /** The run that saved this state. */
  readonly savedByRunId: string;
  readonly agentName: string;
  readonly savedAt: string;
  readonly turn: readonly ModelMessage[];
  /** How many of `turn`'s first messages were the run's input. */
  readonly inputLength: number;
  /** Model turns taken so far. */
  readonly turns: number;
  /** Tool calls taken from the budget so far. */
  readonly toolCalls: number;
  readonly calls: readonly PausedCall[];
  /** What each telemetry plugin asked to keep, by plugin name (`RunTelemetry.pauseContext`). */
  readonly telemetry?: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

interface StoredPausedRun extends Omit<PausedRun, 'turn'> {
  readonly format: typeof pausedRunFormat;
  readonly version: number;
  readonly turn: readonly string[];
  /** SHA-256 of the rest: a truncated or edited row is refused, not half-read. */
  readonly digest: string;
}

function digestOf(content: object): string {
  return sha256Hex(canonicalJson(content));
}

/** The text a session store keeps for a paused run. */
export function encodePausedRun(paused: PausedRun): string {
  const content = {
    format: pausedRunFormat,
    version: pausedRunVersion,
    ...paused,
    turn: paused.turn.map((message, index) => encodeSessionMessage(message, `Paused message ${index + 1}`)),
  };
  return JSON.stringify({ ...content, digest: digestOf(content) });
}

const callStatuses: ReadonlySet<string> = new Set(['pending', 'approved', 'rejected', 'started']);

function isCall(value: unknown): value is PausedCall {
  if (typeof value !== 'object' || value === null) return false;
  const call = value as Record<string, unknown>;
  return (
    typeof call.approvalId === 'string' &&
    typeof call.toolCallId === 'string' &&
    typeof call.toolName === 'string' &&
    typeof call.status === 'string' &&
    callStatuses.has(call.status) &&
    (call.message === undefined || typeof call.message === 'string')
  );
}

function isCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

function hasShape(value: Record<string, unknown>): boolean {
  return (
    ['pauseId', 'firstRunId', 'savedByRunId', 'agentName', 'savedAt'].every(
      (key) => typeof value[key] === 'string',
    ) &&
    Array.isArray(value.turn) &&
    value.turn.every((text) => typeof text === 'string') &&
    isCount(value.inputLength) &&
    isCount(value.turns) &&
    isCount(value.toolCalls) &&
    Array.isArray(value.calls) &&
    value.calls.every(isCall) &&
    (value.telemetry === undefined || isTelemetry(value.telemetry))
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isStringRecord(value: unknown): boolean {
  return isRecord(value) && Object.values(value).every((item) => typeof item === 'string');
}

function isTelemetry(value: unknown): boolean {
  return isRecord(value) && Object.values(value).every(isStringRecord);
}

/**
 * Reads a paused run a session store returned. Refuses, with `PausedRunError`, text that is not
 * one (`PAUSED_RUN_CORRUPT`: truncated, edited, or not JSON) and a version this Ghost does not know
 * (`PAUSED_RUN_VERSION`). Nothing runs from a state it refused.
 */
export function decodePausedRun(text: string, sessionId: string): PausedRun {
  const corrupt = (why: string, cause?: unknown) =>
    new PausedRunError(
      `The paused run kept in session '${sessionId}' cannot be read: ${why}. Nothing ran. Its row was changed outside Ghost or cut short; discard it with agent.resume({ session, discard: true }).`,
      { code: 'PAUSED_RUN_CORRUPT', sessionId, ...(cause === undefined ? {} : { cause }) },
    );
  let stored: unknown;
  try {
    stored = JSON.parse(text);
  } catch (error) {
    throw corrupt('it is not JSON', error);
  }
  if (typeof stored !== 'object' || stored === null || Array.isArray(stored))
    throw corrupt('it is not an object');
  const { digest, ...content } = stored as Record<string, unknown>;
  if (content.format !== pausedRunFormat) throw corrupt('it is not a Ghost paused run');
  if (content.version !== pausedRunVersion) {
    throw new PausedRunError(
      `The paused run kept in session '${sessionId}' has format version ${JSON.stringify(content.version)}; this Ghost reads version ${pausedRunVersion}. Nothing ran. Resume it with the Ghost version that paused it.`,
      { code: 'PAUSED_RUN_VERSION', sessionId },
    );
  }
  if (digest !== digestOf(content)) throw corrupt('its digest does not match its content');
  if (!hasShape(content)) throw corrupt('a field is missing or of the wrong type');
  const { format: _format, version: _version, ...paused } = content as unknown as StoredPausedRun;
  try {
    return { ...paused, turn: paused.turn.map((message) => decodeSessionMessage(message)) };
  } catch (error) {
    throw corrupt('a message in it is unreadable', error);
  }
}
