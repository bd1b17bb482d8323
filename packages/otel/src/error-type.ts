import type { ErrorSummary } from '@ghost/core';

/**
 * The `error.type` of an error summary: the conventions ask for a low-cardinality class of error,
 * and Ghost's stable error codes (`TOOL_ERROR`, `MODEL_RATE_LIMITED`, `RUN_CANCELLED`, ...) are
 * exactly that. Without a code, the error's class name; a bare `Error` says nothing, so it
 * becomes the conventions' fallback `_OTHER`.
 */
export function errorType(error: ErrorSummary | undefined): string {
  if (error === undefined) return '_OTHER';
  if (typeof error.code === 'string' && error.code !== '') return error.code;
  if (error.name !== '' && error.name !== 'Error') return error.name;
  return '_OTHER';
}
