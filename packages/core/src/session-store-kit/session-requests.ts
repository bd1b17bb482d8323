import { ConfigurationError } from '../errors.js';
import { checkSessionActor, checkSessionId } from '../session-identity.js';
import type { SessionOpenRequest } from '../session-store.js';

/** How long `delete` waits for a run holding the session, unless told otherwise. */
export const defaultDeleteLockTimeoutMs = 30_000;

function checkTimeout(value: unknown, option: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new ConfigurationError(
      `${option} must be a number of milliseconds, 0 or more; got ${String(value)}.`,
      {
        code: 'SESSION_OPTION_INVALID',
        option,
      },
    );
  }
  return value;
}

/**
 * Checks an `open` request for a store: the id and actor (see `checkSessionId`), and a
 * `lockTimeoutMs` of 0 or more. Throws a `ConfigurationError` (`SESSION_OPTION_INVALID`).
 */
export function checkSessionOpenRequest(request: SessionOpenRequest): SessionOpenRequest {
  const id = checkSessionId(request?.id, 'id');
  const actor = checkSessionActor(request.actor, 'actor');
  const lockTimeoutMs = checkTimeout(request.lockTimeoutMs, 'lockTimeoutMs');
  return { id, actor, lockTimeoutMs, ...(request.signal === undefined ? {} : { signal: request.signal }) };
}

/** Checks a `delete` request; `lockTimeoutMs` defaults to {@link defaultDeleteLockTimeoutMs}. */
export function checkSessionDeleteRequest(request: {
  readonly id: string;
  readonly actor: string;
  readonly lockTimeoutMs?: number;
}): { readonly id: string; readonly actor: string; readonly lockTimeoutMs: number } {
  const id = checkSessionId(request?.id, 'id');
  const actor = checkSessionActor(request.actor, 'actor');
  const lockTimeoutMs = checkTimeout(request.lockTimeoutMs ?? defaultDeleteLockTimeoutMs, 'lockTimeoutMs');
  return { id, actor, lockTimeoutMs };
}

/** Checks a `prune` request and returns its cutoff. */
export function checkSessionPruneRequest(request: { readonly olderThan: Date }): Date {
  const olderThan = request?.olderThan;
  if (!(olderThan instanceof Date) || !Number.isFinite(olderThan.getTime())) {
    throw new ConfigurationError('prune() takes { olderThan: Date }, a valid date.', {
      code: 'SESSION_OPTION_INVALID',
      option: 'olderThan',
    });
  }
  return olderThan;
}
