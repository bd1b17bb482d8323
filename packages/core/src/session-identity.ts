import { ConfigurationError } from './errors.js';

/** The most characters a session id or an actor may have. */
export const maxSessionIdLength = 256;

// C0 and C1 control characters, NUL included: an id is printed in messages and logs as it is.
function hasControlCharacter(value: string): boolean {
  for (let index = 0; index < value.length; index += 1) {
    const code = value.charCodeAt(index);
    if (code <= 0x1f || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}
// A surrogate without its pair cannot be encoded as UTF-8, so no store could keep it verbatim.
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function checkIdentifier(
  value: unknown,
  what: 'session id' | 'actor' | 'operation id',
  option: string,
): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > maxSessionIdLength) {
    const got =
      typeof value === 'string' ? `${value.length} characters` : value === null ? 'null' : typeof value;
    throw new ConfigurationError(
      `A ${what} must be a string of 1 to ${maxSessionIdLength} printable characters, got ${got}.`,
      { code: 'SESSION_OPTION_INVALID', option },
    );
  }
  if (hasControlCharacter(value) || loneSurrogate.test(value)) {
    throw new ConfigurationError(
      `A ${what} must hold printable characters only: this one has a control character (such as NUL or a newline) or a lone surrogate.`,
      { code: 'SESSION_OPTION_INVALID', option },
    );
  }
  return value;
}

/**
 * Checks a session id: 1 to 256 printable characters (no control characters, no lone surrogates).
 * Quotes, `%`, `_` and any other printable character are allowed and stored verbatim. Throws a
 * `ConfigurationError` (`SESSION_OPTION_INVALID`) otherwise.
 */
export function checkSessionId(id: unknown, option = 'session.id'): string {
  return checkIdentifier(id, 'session id', option);
}

/** Checks an actor the way {@link checkSessionId} checks an id. */
export function checkSessionActor(actor: unknown, option = 'session.actor'): string {
  return checkIdentifier(actor, 'actor', option);
}

/**
 * Checks the operation id of a session write (`run.session.append`'s `operationId`) the way
 * {@link checkSessionId} checks an id, so a store can keep it verbatim.
 */
export function checkSessionOperationId(operationId: unknown, option = 'operationId'): string {
  return checkIdentifier(operationId, 'operation id', option);
}
