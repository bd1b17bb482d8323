import { messageColumns, sessionColumns } from './session-rows.js';

/**
 * The newest `limit` messages of session `session` before position `end`, newest first (arguments:
 * session, end, limit). The primary key's index serves it, so it reads those rows only, however
 * long the history (a test checks the plan).
 */
export const historyQuery = `SELECT ${messageColumns} FROM ghost_session_messages
  WHERE session = ? AND position < ? ORDER BY position DESC LIMIT ?`;

/**
 * One page of an actor's sessions, newest first, numbered below a cursor (arguments: actor,
 * cursor, limit), through the `(actor, sequence)` index.
 */
export const listQuery = `SELECT ${sessionColumns} FROM ghost_sessions
  WHERE actor = ? AND sequence < ? ORDER BY sequence DESC LIMIT ?`;
