import { ConfigurationError } from '../errors.js';
import { checkSessionActor } from '../session-identity.js';
import type { SessionListRequest } from '../session-store.js';

/** The longest `cursor` a store accepts. */
const maxCursorBytes = 512;
const defaultListLimit = 20;
const maxListLimit = 100;

/** A `list` request checked by {@link checkSessionListRequest}. */
export interface CheckedSessionListRequest {
  readonly actor: string;
  /** 1 to 100. */
  readonly limit: number;
  /**
   * The cursor's number: stores number their sessions in the order they were created, list newest
   * first, and start a page after the session with this number. `undefined` for the first page.
   */
  readonly after: number | undefined;
}

/**
 * Checks a `list` request for a store: the actor as {@link checkSessionActor} does, `limit` 1 to
 * 100 (default 20), and a cursor made by {@link sessionListCursor}. Throws a `ConfigurationError`
 * (`SESSION_OPTION_INVALID`) naming what is wrong.
 */
export function checkSessionListRequest(request: SessionListRequest): CheckedSessionListRequest {
  if (typeof request !== 'object' || request === null) {
    throw new ConfigurationError('list() takes { actor, limit?, cursor? }.', {
      code: 'SESSION_OPTION_INVALID',
      option: 'list',
    });
  }
  const actor = checkSessionActor(request.actor, 'actor');
  const limit = request.limit ?? defaultListLimit;
  if (!Number.isInteger(limit) || limit < 1 || limit > maxListLimit) {
    throw new ConfigurationError(`list() takes a limit from 1 to ${maxListLimit}, got ${String(limit)}.`, {
      code: 'SESSION_OPTION_INVALID',
      option: 'limit',
    });
  }
  return { actor, limit, after: request.cursor === undefined ? undefined : readCursor(request.cursor) };
}

function readCursor(cursor: unknown): number {
  const invalid = () =>
    new ConfigurationError(
      'list() was given a cursor it did not make: pass the nextCursor of the page before, unchanged.',
      { code: 'SESSION_OPTION_INVALID', option: 'cursor' },
    );
  if (typeof cursor !== 'string' || cursor.length === 0 || cursor.length > maxCursorBytes) throw invalid();
  const match = /^s([0-9a-z]{1,11})$/.exec(cursor);
  const number = match?.[1] === undefined ? Number.NaN : Number.parseInt(match[1], 36);
  if (!Number.isSafeInteger(number) || number < 0) throw invalid();
  return number;
}

/** The cursor of the page that follows the session numbered `sequence` (see {@link CheckedSessionListRequest.after}). */
export function sessionListCursor(sequence: number): string {
  return `s${sequence.toString(36)}`;
}
