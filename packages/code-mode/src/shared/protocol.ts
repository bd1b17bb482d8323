import type { JsonValue } from '@ghost/core';
import { formatUntrusted } from './format-untrusted.js';
import { exceedsJsonDepth } from './json-depth.js';

/**
 * The wire protocol between the parent and an engine host (docs/architecture.md): length-prefixed
 * JSON frames on fd 3 (or a worker's message port). The host speaks first with `hello`; a frame of
 * an unknown type, or one that is malformed, ends the program with an error. Version 2: the host
 * enforces `toolCalls` itself, and the parent treats a host that sends more calls as broken.
 * Version 3: the parent may send `hurry` before `hello` (a spare ends its warm-up).
 */
export const protocolVersion = 3;

/**
 * How deeply values that cross between a program and the parent may nest (tool arguments and
 * results, the program's value). Deeper values would have the parent recurse that deep: the host
 * refuses them with a clear error, and the parent treats a host frame nested deeper as broken.
 */
export const maxValueDepth = 256;

/** How many levels a host frame adds around the values it carries (frame, calls, call). */
const frameEnvelopeDepth = 3;

/** The longest program id or call id a host may send; ours are a few characters. */
const maxIdLength = 128;

/** What a program reads when a tool call is refused for `limits.toolCalls`, host or parent side. */
export function formatToolCallLimit(toolCalls: number): string {
  return `This program reached its limit of ${toolCalls} tool calls (limits.toolCalls); make fewer calls per program.`;
}

/**
 * The argument a process host is started with when a program is already waiting for it: the host
 * says `hello` without rehearsing first (see `rehearseProgram`).
 */
export const noRehearsalArgument = '--ghost-no-rehearsal';

/** One catalog entry as the guest's `tools` and `ALL_TOOLS` see it. */
export interface GuestToolEntry {
  readonly name: string;
  readonly identifier: string;
  readonly description: string;
  readonly inputSchema: JsonValue;
  readonly outputSchema?: JsonValue;
}

/** The limits the host enforces itself. */
export interface HostLimits {
  /** Bytes of output, and of the program's value and error, each. */
  readonly outputBytes: number;
  readonly memoryBytes: number;
  readonly cpuSeconds: number;
  readonly wallSeconds: number;
  /**
   * Tool calls the program may make. The host refuses the calls past it in the guest and never
   * sends them: the parent treats a host that sends more as broken. Absent, the host counts none.
   */
  readonly toolCalls?: number;
}

/**
 * How long a host of `placement: 'session'` keeps serving: after each program that completed, it
 * builds a fresh guest and answers `ready` again while its own totals stay under these; otherwise
 * it exits after `done`. They keep a reused host clear of the sandbox's limits, which count the
 * whole process, so a program is never stopped for what the programs before it used.
 */
export interface HostReuse {
  /** The host's total CPU time (user and system) above which it serves no further program. */
  readonly cpuSeconds: number;
  /** The host's resident memory above which it serves no further program. */
  readonly residentBytes: number;
}

/**
 * Parent → host, right after `hello`: the catalog and limits, so the host can build the guest
 * (runtime, context, prelude) before any program arrives. The host answers `ready`. With `reuse`
 * the host may serve further programs, each in a fresh guest (see {@link HostReuse}).
 */
export interface SetupFrame {
  readonly type: 'setup';
  readonly tools: readonly GuestToolEntry[];
  readonly limits: HostLimits;
  readonly reuse?: HostReuse;
}

/** Parent → host: run this program. `source` is already rewritten to return its final expression. */
export interface ExecuteFrame {
  readonly type: 'execute';
  readonly programId: string;
  readonly source: string;
}

/** The answer to one guest tool call. */
export type ToolCallResult =
  | { readonly callId: string; readonly ok: true; readonly value: JsonValue }
  | { readonly callId: string; readonly ok: false; readonly error: string };

/** Parent → host: answers to tool calls, batched. */
interface ToolResultsFrame {
  readonly type: 'tool_results';
  readonly programId: string;
  readonly results: readonly ToolCallResult[];
}

/** Parent → host: end the program now (the thread placement; a process host is killed instead). */
interface StopFrame {
  readonly type: 'stop';
  readonly programId: string;
}

/**
 * Parent → host, before `hello`: a program is waiting for this spare, so it ends its warm-up now
 * (see `rehearseProgram`). A host past its warm-up ignores it.
 */
interface HurryFrame {
  readonly type: 'hurry';
}

/** Every frame the parent sends a host. */
export type ParentFrame = SetupFrame | ExecuteFrame | ToolResultsFrame | StopFrame | HurryFrame;

/** Host → parent, first frame: the protocol version and the engine, ready for a program. */
interface HelloFrame {
  readonly type: 'hello';
  readonly protocol: number;
  readonly engine: string;
}

/** Host → parent: the guest is built; the host waits for `execute` (again, after `done`, when reused). */
interface ReadyFrame {
  readonly type: 'ready';
}

/** Host → parent: program output, in order. `skippedBytes` counts output cut before this text. */
interface OutputFrame {
  readonly type: 'output';
  readonly programId: string;
  readonly text: string;
  readonly skippedBytes?: number;
}

/** One tool call a guest made. */
export interface GuestToolCall {
  readonly callId: string;
  readonly name: string;
  readonly input: JsonValue;
}

/** Host → parent: tool calls, batched by the host. */
interface ToolCallsFrame {
  readonly type: 'tool_calls';
  readonly programId: string;
  readonly calls: readonly GuestToolCall[];
}

/** Host → parent: the program ended, with its value or its error. */
interface DoneFrame {
  readonly type: 'done';
  readonly programId: string;
  readonly status: 'completed' | 'error';
  readonly value?: JsonValue;
  readonly error?: string;
}

/** Every frame a host sends the parent. */
export type HostFrame = HelloFrame | ReadyFrame | OutputFrame | ToolCallsFrame | DoneFrame;

/** Thrown when a frame is not one the protocol defines. */
export class ProtocolError extends Error {
  override readonly name = 'ProtocolError';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function requireString(frame: Record<string, unknown>, key: string): void {
  if (typeof frame[key] !== 'string')
    throw new ProtocolError(`A '${String(frame.type)}' frame needs a string '${key}'.`);
}

/** An id the host sends: a non-empty string of at most {@link maxIdLength} characters. */
function requireId(value: unknown, what: string): void {
  if (typeof value !== 'string' || value === '' || value.length > maxIdLength) {
    throw new ProtocolError(
      `${what} must be a string of 1 to ${maxIdLength} characters, not ${formatUntrusted(value)}.`,
    );
  }
}

/**
 * Checks a frame from a host; throws {@link ProtocolError} for anything the protocol does not
 * define. The host is untrusted: the checks bound what later code may assume (ids are short
 * strings, counts are numbers, nothing nests deeper than {@link maxValueDepth} levels), and
 * messages describe what was wrong without repeating it.
 */
export function parseHostFrame(frame: unknown): HostFrame {
  if (!isRecord(frame)) throw new ProtocolError('A host frame must be a JSON object.');
  if (exceedsJsonDepth(frame, maxValueDepth + frameEnvelopeDepth)) {
    throw new ProtocolError(
      `A host frame nests deeper than values may (${maxValueDepth} levels of arrays and objects).`,
    );
  }
  switch (frame.type) {
    case 'hello':
      if (typeof frame.protocol !== 'number')
        throw new ProtocolError("A 'hello' frame needs a numeric 'protocol'.");
      requireString(frame, 'engine');
      break;
    case 'ready':
      break;
    case 'output': {
      requireId(frame.programId, "An 'output' frame's programId");
      requireString(frame, 'text');
      const skipped = frame.skippedBytes;
      if (skipped !== undefined && (!Number.isSafeInteger(skipped) || (skipped as number) < 0)) {
        throw new ProtocolError(
          `An 'output' frame's 'skippedBytes' must be a whole number of bytes, not ${formatUntrusted(skipped)}.`,
        );
      }
      break;
    }
    case 'tool_calls':
      requireId(frame.programId, "A 'tool_calls' frame's programId");
      if (!Array.isArray(frame.calls)) throw new ProtocolError("A 'tool_calls' frame needs a 'calls' array.");
      for (const call of frame.calls) {
        if (!isRecord(call) || typeof call.name !== 'string') {
          throw new ProtocolError("Each tool call needs a string 'callId' and 'name'.");
        }
        requireId(call.callId, "A tool call's callId");
      }
      break;
    case 'done':
      requireId(frame.programId, "A 'done' frame's programId");
      if (frame.status !== 'completed' && frame.status !== 'error') {
        throw new ProtocolError("A 'done' frame's status must be 'completed' or 'error'.");
      }
      if (frame.error !== undefined && typeof frame.error !== 'string') {
        throw new ProtocolError(
          `A 'done' frame's error must be a string, not ${formatUntrusted(frame.error)}.`,
        );
      }
      break;
    default:
      throw new ProtocolError(`Unknown host frame type: ${formatUntrusted(frame.type)}.`);
  }
  return frame as unknown as HostFrame;
}

/** Checks a frame from the parent; the host uses it. */
export function parseParentFrame(frame: unknown): ParentFrame {
  if (!isRecord(frame)) throw new ProtocolError('A parent frame must be a JSON object.');
  switch (frame.type) {
    case 'setup':
      if (!Array.isArray(frame.tools) || !isRecord(frame.limits)) {
        throw new ProtocolError("A 'setup' frame needs 'tools' and 'limits'.");
      }
      if (
        frame.reuse !== undefined &&
        (!isRecord(frame.reuse) ||
          typeof frame.reuse.cpuSeconds !== 'number' ||
          typeof frame.reuse.residentBytes !== 'number')
      ) {
        throw new ProtocolError("A 'setup' frame's 'reuse' needs numeric 'cpuSeconds' and 'residentBytes'.");
      }
      break;
    case 'execute':
      requireString(frame, 'programId');
      requireString(frame, 'source');
      break;
    case 'tool_results':
      requireString(frame, 'programId');
      if (!Array.isArray(frame.results)) throw new ProtocolError("A 'tool_results' frame needs 'results'.");
      break;
    case 'stop':
      requireString(frame, 'programId');
      break;
    case 'hurry':
      break;
    default:
      throw new ProtocolError(`Unknown parent frame type '${String(frame.type)}'.`);
  }
  return frame as unknown as ParentFrame;
}
