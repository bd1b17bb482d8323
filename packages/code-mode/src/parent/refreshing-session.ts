import { CleanupError } from '@ghost/core/plugin';
import type { CodeModeSession, ObserveOptions, ProgramResult } from '../engine.js';
import { CodeModeStateError } from '../errors.js';

/** Opens a session for the newest catalog, allowed `programs` more programs. */
export type OpenSession = (programs: number) => Promise<CodeModeSession>;

/**
 * A code-mode session whose catalog can change between programs, when a tool source changes the
 * run's tools. `replace()` records how to open a session for the new catalog; the next `exec`
 * closes the old session (discarding its prewarmed host, built for the old catalog) and starts
 * the program in the new one. A program that is running keeps its session, and so its catalog,
 * until it ends: `wait` and `stop` reach it, and an `exec` meanwhile is refused by it as usual.
 * The `programs` limit counts across the sessions.
 */
export class RefreshingSession implements CodeModeSession {
  #current: CodeModeSession;
  #next: OpenSession | undefined;
  #isProgramRunning = false;
  #isSwitching = false;
  #programsStarted = 0;
  readonly #programs: number;
  readonly #retiring = new Set<Promise<void>>();
  #closing: Promise<void> | undefined;

  constructor(initial: CodeModeSession, programs: number) {
    this.#current = initial;
    this.#programs = programs;
  }

  /** The next `exec` runs in a session opened by `open`, once no program is running. */
  replace(open: OpenSession): void {
    this.#next = open;
  }

  async execute(source: string, options: ObserveOptions = {}): Promise<ProgramResult> {
    this.#requireIdle();
    const next = this.#next;
    const programsLeft = this.#programs - this.#programsStarted;
    // With no program left, the current session gives the limit's own answer.
    if (next && !this.#isProgramRunning && programsLeft > 0 && !this.#closing) {
      this.#next = undefined;
      this.#isSwitching = true;
      try {
        this.#retire(this.#current);
        this.#current = await next(programsLeft);
      } finally {
        this.#isSwitching = false;
      }
      if (this.#closing) this.#retire(this.#current);
    }
    const result = await this.#current.execute(source, {
      ...options,
      onProgramStart: () => {
        this.#programsStarted += 1;
        options.onProgramStart?.();
      },
    });
    return this.#observed(result);
  }

  async wait(options?: ObserveOptions): Promise<ProgramResult> {
    this.#requireIdle();
    return this.#observed(await this.#current.wait(options));
  }

  async stop(options?: ObserveOptions): Promise<ProgramResult> {
    this.#requireIdle();
    return this.#observed(await this.#current.stop(options));
  }

  /** While the next session opens, the old one is closed and the new one not there yet. */
  #requireIdle(): void {
    if (this.#isSwitching) {
      throw new CodeModeStateError(
        'Another exec, wait or stop is in progress; code mode runs one control operation at a time. Call it again after that one returns.',
      );
    }
  }

  #observed(result: ProgramResult): ProgramResult {
    this.#isProgramRunning = result.status === 'still_working';
    return result;
  }

  #retire(session: CodeModeSession): void {
    const closing = session.close();
    this.#retiring.add(closing);
    // A failed close stays in the set, so close() reports it.
    closing.then(
      () => this.#retiring.delete(closing),
      () => {},
    );
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#retire(this.#current);
      const results = await Promise.allSettled([...this.#retiring]);
      const failure = results.find((result) => result.status === 'rejected');
      if (failure) {
        const reason = (failure as PromiseRejectedResult).reason as unknown;
        throw CleanupError.isInstance(reason)
          ? reason
          : new CleanupError(`Code mode could not close a session: ${String(reason)}`, { cause: reason });
      }
    })();
    return this.#closing;
  }
}
