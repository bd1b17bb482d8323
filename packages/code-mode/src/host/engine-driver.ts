import type { JsonValue } from '@ghost/core';
import type { HostLimits } from '../shared/protocol.js';

/** What a guest is built from, before its program arrives. */
export interface GuestSetup {
  /** The shared guest prelude to evaluate first (see `guestPrelude` and `GuestControl`). */
  readonly prelude: string;
  /** The catalog as JSON text, the prelude's second argument. */
  readonly toolsJson: string;
  readonly limits: HostLimits;
}

/** One program as an engine driver runs it, inside the host. */
export interface HostProgram {
  readonly programId: string;
  /**
   * The program: in JavaScript wrapped as an async function call (see `wrapProgram`), in any
   * other language (`EngineDriver.language`) as the model wrote it.
   */
  readonly source: string;
  /**
   * Sends the tool calls the guest queued: the JSON text `takeCalls()` returned. Call it each time
   * the guest's pending jobs have run; results come back through {@link PreparedGuest.deliverResults}.
   */
  sendCalls(callsJson: string): void;
  /** The prelude's `write`: program output. */
  write(text: string): void;
  /** True once the parent asked the program to stop; check it in the engine's interrupt handler. */
  readonly isStopRequested: boolean;
}

/** How a program ended, as the driver reports it. */
export interface ProgramCompletion {
  readonly status: 'completed' | 'error';
  readonly value?: JsonValue;
  readonly error?: string;
}

/** A guest built by {@link EngineDriver.prepare}, ready to run exactly one program. */
export interface PreparedGuest {
  /** Runs the program to its end. Rejects only when the engine itself failed. */
  run(program: HostProgram): Promise<ProgramCompletion>;
  /**
   * Hands the running program tool results, the JSON text for the prelude's `deliverResults`.
   * The host calls it from its event loop, never while the guest runs; the driver passes it in
   * at its next turn. Ignored once the program has ended.
   */
  deliverResults(resultsJson: string): void;
  /** Frees the guest; safe after `run` and instead of it. */
  dispose(): void;
}

/**
 * The part of a JavaScript engine that runs inside the host. The host loads it at start, builds
 * the guest with `prepare` as soon as the catalog arrives (before the program), and runs one
 * program in it; `@ghost/code-mode/host` does the rest (protocol, output, tool-call batching).
 */
export interface EngineDriver {
  /** The engine's name, sent in the handshake. */
  readonly engine: string;
  /**
   * The language programs are written in. Default `'javascript'`: the host hands the driver each
   * program wrapped as an async function body (see `wrapProgram`). In any other language the
   * driver gets the program as the model wrote it.
   */
  readonly language?: string;
  /**
   * The program a spare host rehearses before it says hello (see `rehearseProgram`), written in
   * {@link language}: it prints a line, calls the tool `warm` once, and ends with a value. Default
   * a JavaScript program; a driver of another language without one skips the rehearsal.
   */
  readonly rehearsalSource?: string;
  /**
   * Builds a fresh guest: runtime, context, prelude and globals. A host reused for a session's
   * programs calls it again after each completed program, and each call must give a new guest.
   */
  prepare(setup: GuestSetup): Promise<PreparedGuest>;
}

/** True when the driver runs JavaScript, whose programs the host wraps (see `wrapProgram`). */
export function isJavaScript(driver: EngineDriver): boolean {
  return driver.language === undefined || driver.language === 'javascript';
}

/**
 * The error for a program that can never continue: its jobs have all run, no tool call is in
 * flight, and it has not ended, so nothing the host does could ever wake it. A driver ends such
 * a program at once instead of holding its host until `wallSeconds`. `hasProgramEnded` says the
 * program's own promise settled but its completion could not be read (the guest API's settling
 * threw). Every driver reports it in these words, so every engine tells the model the same thing.
 *
 * @example
 * ```ts
 * if (callsInFlight === 0 && !hasPendingJobs) return { status: 'error', error: formatStall(false) };
 * ```
 */
export function formatStall(hasProgramEnded: boolean): string {
  return hasProgramEnded
    ? 'The program ended, but its outcome could not be read: reading its error or value threw, or it replaced a builtin the guest API needs.'
    : 'The program is waiting for a promise that nothing can settle: no tool call is in flight, so it could never continue.';
}
