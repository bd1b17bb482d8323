import type { JsonValue } from '@ghost/core';
import { formatBytes, keepHeadAndTail } from './head-and-tail.js';
import { exceedsJsonDepth } from './json-depth.js';
import { maxValueDepth } from './protocol.js';

/** How a program ended, as a host reports it in `done`. */
export interface ProgramCompletionState {
  readonly status: 'completed' | 'error';
  readonly value?: JsonValue;
  readonly error?: string;
}

/**
 * Bounds what a program gives back to the model by `outputBytes` (see `CodeModeLimits`): a value
 * whose JSON is larger becomes an error that names its size and says what to do instead, a value
 * nested deeper than the protocol carries becomes an error too, and a longer error message keeps
 * its head and its tail. The host applies it before it sends `done`, and the parent again to what
 * arrives, since it trusts no host.
 */
export function limitProgramCompletion(
  completion: ProgramCompletionState,
  outputBytes: number,
): ProgramCompletionState {
  if (completion.status === 'error') {
    const error = completion.error ?? 'The program failed.';
    return {
      status: 'error',
      error: keepHeadAndTail(error, outputBytes, { what: 'the error message', limit: 'outputBytes' }),
    };
  }
  const { value } = completion;
  if (value === undefined) return { status: 'completed' };
  if (exceedsJsonDepth(value, maxValueDepth)) {
    return {
      status: 'error',
      error: `The program's value nests deeper than ${maxValueDepth} levels of arrays and objects, more than code mode carries. Return a flatter value.`,
    };
  }
  let valueBytes: number;
  try {
    valueBytes = Buffer.byteLength(JSON.stringify(value));
  } catch (error) {
    return { status: 'error', error: `The program's value is not JSON: ${(error as Error).message}` };
  }
  if (valueBytes > outputBytes) {
    return {
      status: 'error',
      error: `The program's value is ${formatBytes(valueBytes)} bytes of JSON, over the ${formatBytes(outputBytes)}-byte limit (limits.outputBytes). Return less (a summary, a count, the first items), or write it with text() or console.log, whose output keeps its head and tail.`,
    };
  }
  return { status: 'completed', value };
}
