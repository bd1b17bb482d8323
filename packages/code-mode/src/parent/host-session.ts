import { CleanupError } from '@ghost/core/plugin';
import { raceAbort } from '@ghost/core/tool-calls';
import type { CodeModeSession, ObserveOptions, ProgramResult } from '../engine.js';
import { CodeModeHostError, CodeModeSourceTooLargeError, CodeModeStateError } from '../errors.js';
import type { CodeModeLimits } from '../limits.js';
import { loadProgramParser, type PreparedSource, prepareProgramSource } from '../program-source.js';
import { errorMessage } from '../shared/error-message.js';
import type { ToolBroker } from '../tool-broker.js';
import { failedHostLink, type HostLauncher, type HostLink, type LaunchPurpose } from './host-link.js';
import { RunningProgram } from './running-program.js';
import type { SpareHosts } from './spare-host-pool.js';

/** What a host session is built from. */
export interface HostSessionOptions {
  /** Starts one host for one program (or, with reuse, for the programs that follow while they complete). */
  readonly launch: HostLauncher;
  readonly broker: ToolBroker;
  readonly limits: CodeModeLimits;
  readonly observationWindowMs: number;
  /** Start the next host before it is needed. */
  readonly prewarm: boolean;
  /**
   * The runtime's pool of spare hosts, shared with other sessions: with it, the session keeps no
   * spare of its own and takes one from the pool when a program starts.
   */
  readonly spares?: SpareHosts;
  /** Releases what the session shares between its hosts (a worker pool); run last by `close()`. */
  readonly release?: () => Promise<void>;
  /**
   * Whether programs are JavaScript, which the session parses and rewrites to return their
   * completion value (see `prepareProgramSource`). Default true; another language's programs go
   * to the host as written, and its engine finds their value and syntax errors itself.
   */
  readonly isJavaScript?: boolean;
}

interface Spare {
  readonly link: HostLink;
  isLost: boolean;
}

/**
 * The generic code-mode session for engines that run programs in a host (process or thread): the
 * state machine (one program, one control operation at a time, the observation window, the
 * wall-clock watchdog), prewarmed hosts, and the broker wiring. Engines supply only how to launch
 * a host. A program's host starts within the program's own bounds: `exec` watches the start for
 * its observation window (answering `still_working` past it), `wallSeconds` counts from `exec`,
 * and `stop` ends a program whose host is not ready yet. `exec` rejects when no host would start
 * (twice) while it watched, or when its signal aborted the start.
 */
export class HostSession implements CodeModeSession {
  readonly #options: HostSessionOptions;
  #spare: Spare | undefined;
  /** The host being readied for `execute`, until it is ready. */
  #starting: HostLink | undefined;
  #program: RunningProgram | undefined;
  #programsStarted = 0;
  #isBusy = false;
  #closing: Promise<void> | undefined;
  readonly #cleanups = new Set<Promise<void>>();

  constructor(options: HostSessionOptions) {
    this.#options = options;
    if (options.prewarm && !options.spares) this.#spare = this.#launchSpare();
    // The parser loads while the first host starts, off the first program's path.
    if (options.isJavaScript !== false) void loadProgramParser();
  }

  execute(source: string, options: ObserveOptions = {}): Promise<ProgramResult> {
    return this.#exclusive(async () => {
      const { limits } = this.#options;
      const current = this.#program;
      if (current && !current.final) {
        throw new CodeModeStateError(
          'A program is still working. Call wait to keep watching it, or stop to end it, before exec starts another.',
        );
      }
      if (typeof source !== 'string')
        throw new CodeModeStateError('exec needs the program source as a string.');
      const sourceBytes = Buffer.byteLength(source);
      if (sourceBytes > limits.sourceBytes) {
        throw new CodeModeSourceTooLargeError(
          `The program is ${sourceBytes} bytes, over the ${limits.sourceBytes}-byte limit (limits.sourceBytes). Send a shorter program.`,
          { sourceBytes, limit: limits.sourceBytes },
        );
      }
      if (this.#programsStarted >= limits.programs) {
        throw new CodeModeStateError(
          `This run has used its ${limits.programs} programs (limits.programs). Answer with what you have.`,
        );
      }
      options.onProgramStart?.();
      const prepared = await this.#prepareSource(source);
      if (!prepared.ok) return { status: 'error', output: '', error: prepared.error };
      this.#programsStarted += 1;
      if (current?.cleanup) this.#track(current.cleanup); // a final result nobody asked for
      this.#program = undefined;
      // The program starts now, with its host still to come: its wall clock runs from here, and
      // exec watches the host's start within its observation window like the rest of the program.
      const program = this.#start(prepared.source, options.controlCallId ?? '');
      const result = await this.#observe(program, options);
      if (!program.hasHost) {
        if (program.hostFailure !== undefined) {
          // No host would start, twice (a CodeModeHostError): the machine, sandbox or engine is
          // broken, not the program. Or the session closed meanwhile.
          this.#discard(program);
          throw program.hostFailure;
        }
        if (options.signal?.aborted) {
          program.finish({ status: 'terminated' });
          this.#discard(program);
          throw options.signal.reason;
        }
      }
      return result;
    });
  }

  /** JavaScript parsed and rewritten to return its value; another language as written. */
  async #prepareSource(source: string): Promise<PreparedSource> {
    if (this.#options.isJavaScript === false) return { ok: true, source };
    await loadProgramParser();
    return prepareProgramSource(source);
  }

  /** Forgets a program exec did not hand back: nothing can wait for it or stop it. */
  #discard(program: RunningProgram): void {
    if (this.#program === program) this.#program = undefined;
    if (program.cleanup) this.#track(program.cleanup);
  }

  wait(options: ObserveOptions = {}): Promise<ProgramResult> {
    return this.#exclusive(async () => this.#observe(this.#requireProgram('wait'), options));
  }

  stop(options: ObserveOptions = {}): Promise<ProgramResult> {
    return this.#exclusive(async () => {
      const program = this.#requireProgram('stop');
      if (options.controlCallId) program.controlCallId = options.controlCallId;
      if (!program.final) program.finish({ status: 'terminated' });
      await program.cleanup;
      return this.#report(program);
    });
  }

  close(): Promise<void> {
    this.#closing ??= this.#closeAll();
    return this.#closing;
  }

  async #closeAll(): Promise<void> {
    const program = this.#program;
    if (program && !program.final) program.finish({ status: 'terminated' });
    if (program?.cleanup) this.#track(program.cleanup);
    this.#program = undefined;
    const { spares } = this.#options;
    if (spares) this.#track(spares.leave());
    if (this.#spare) this.#track(this.#spare.link.close());
    this.#spare = undefined;
    if (this.#starting) this.#track(this.#starting.close());
    const { release } = this.#options;
    if (release) this.#track(Promise.allSettled([...this.#cleanups]).then(() => release()));
    const { cleanupSeconds } = this.#options.limits;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), cleanupSeconds * 1000);
    });
    try {
      const settled = await Promise.race([Promise.allSettled([...this.#cleanups]), timeout]);
      if (settled === 'timeout') {
        throw new CleanupError(
          `Code mode could not release its engine hosts within ${cleanupSeconds} s (limits.cleanupSeconds); processes may still be running.`,
        );
      }
      const failure = settled.find((result) => result.status === 'rejected');
      if (failure) {
        const reason = (failure as PromiseRejectedResult).reason as Error;
        throw CleanupError.isInstance(reason)
          ? reason
          : new CleanupError(`Code mode could not release an engine host: ${reason.message}`, {
              cause: reason,
            });
      }
    } finally {
      clearTimeout(timer);
    }
  }

  async #exclusive(operation: () => Promise<ProgramResult>): Promise<ProgramResult> {
    if (this.#closing)
      throw new CodeModeStateError('This code-mode session is closed; the run that owned it has ended.');
    if (this.#isBusy) {
      throw new CodeModeStateError(
        'Another exec, wait or stop is in progress; code mode runs one control operation at a time. Call it again after that one returns.',
      );
    }
    this.#isBusy = true;
    try {
      return await operation();
    } finally {
      this.#isBusy = false;
    }
  }

  #requireProgram(operation: 'wait' | 'stop'): RunningProgram {
    const program = this.#program;
    if (!program) {
      throw new CodeModeStateError(
        `No program is running, so there is nothing to ${operation}. A final status (completed, error, terminated) ends a program; start a new one with exec.`,
      );
    }
    return program;
  }

  #replenishSpare(): void {
    const { prewarm, limits, spares } = this.#options;
    if (!prewarm || this.#closing || this.#spare || this.#programsStarted >= limits.programs) return;
    if (spares) {
      // The session's host retired: it holds none for its next program now.
      spares.holdHost(false);
      spares.refill();
      return;
    }
    this.#spare = this.#launchSpare();
  }

  #launchSpare(): Spare {
    return this.#watchSpare(this.#launch('spare'));
  }

  /** Starts a host; a launcher that throws gives a host that is lost from the start. */
  #launch(purpose: LaunchPurpose): HostLink {
    try {
      return this.#options.launch(purpose);
    } catch (error) {
      return failedHostLink(`The engine host could not be launched: ${errorMessage(error)}`);
    }
  }

  #watchSpare(link: HostLink): Spare {
    const spare: Spare = { link, isLost: false };
    void link.lost.then(() => {
      spare.isLost = true;
    });
    return spare;
  }

  /** A reused host is the next program's host; it is held at once, so no exec starts another. */
  #keepReusedHost(link: HostLink): void {
    if (this.#closing || this.#spare || this.#programsStarted >= this.#options.limits.programs) {
      this.#track(link.close());
      return;
    }
    this.#spare = this.#watchSpare(link);
    this.#options.spares?.holdHost(true);
  }

  /**
   * The prewarmed host if it is still alive (the session's reused host, or one from the pool),
   * else a fresh one; one retry when a host fails to start. An abort of `signal` (the program
   * ended first) ends the wait with its reason, and the host is released.
   */
  async #readyHost(signal: AbortSignal): Promise<HostLink> {
    let lastError: unknown;
    for (let attempt = 0; attempt < 2; attempt += 1) {
      if (this.#closing)
        throw new CodeModeStateError('This code-mode session closed while the program was starting.');
      const spare = this.#spare && !this.#spare.isLost ? this.#spare : undefined;
      if (this.#spare && !spare) this.#track(this.#spare.link.close());
      this.#spare = undefined;
      const prewarmed = spare?.link ?? this.#options.spares?.take();
      // A spare still warming up says hello now that a program waits for it.
      prewarmed?.hurry?.();
      const link = prewarmed ?? this.#launch('waiting-program');
      // Owned by the session while it starts, so a close() meanwhile releases it too.
      this.#starting = link;
      try {
        await raceAbort(link.ready, signal);
      } catch (error) {
        if (signal.aborted) {
          this.#track(link.close());
          throw signal.reason;
        }
        lastError = error;
        this.#track(link.close());
        continue;
      } finally {
        this.#starting = undefined;
      }
      if (this.#closing) {
        this.#track(link.close());
        throw new CodeModeStateError('This code-mode session closed while the program was starting.');
      }
      return link;
    }
    throw new CodeModeHostError(`The engine host could not start: ${errorMessage(lastError)}`, {
      cause: lastError,
    });
  }

  #start(source: string, controlCallId: string): RunningProgram {
    const id = `p${this.#programsStarted}`;
    let program: RunningProgram | undefined;
    const calls = this.#options.broker.openProgram(id, () => program?.controlCallId ?? '');
    const starting = new AbortController();
    const host = this.#readyHost(starting.signal);
    host.catch(() => {}); // the program reads the failure
    program = new RunningProgram({
      id,
      host,
      abandonHost: () => starting.abort(new Error('The program ended before its engine host was ready.')),
      calls,
      limits: this.#options.limits,
      controlCallId,
      onHostReusable: (next) => this.#keepReusedHost(next),
    });
    this.#program = program;
    const started = program;
    started.start(source);
    // The next host starts once this program is over and its result is on its way: booting a
    // process costs more CPU than most programs (and spawning blocks the event loop for a few
    // milliseconds), so on a small machine it would slow the very program it is waiting behind.
    // A reused host is already the session's next host. `finished` never rejects.
    void started.finished.then(() => {
      if (!started.isHostReused) setImmediate(() => this.#replenishSpare());
    });
    return started;
  }

  async #observe(program: RunningProgram, options: ObserveOptions): Promise<ProgramResult> {
    if (options.controlCallId) program.controlCallId = options.controlCallId;
    if (!program.final) {
      const windowMs = options.observationWindowMs ?? this.#options.observationWindowMs;
      await watch(program.finished, windowMs, options.signal);
    }
    return this.#report(program);
  }

  #report(program: RunningProgram): ProgramResult {
    const output = program.output.take();
    const artifacts = program.calls.takeArtifacts();
    const final = program.final;
    if (final && this.#program === program) {
      this.#program = undefined;
      if (program.cleanup) this.#track(program.cleanup);
    }
    return {
      status: final?.status ?? 'still_working',
      output,
      ...(final?.value !== undefined ? { value: final.value } : {}),
      ...(final?.error !== undefined ? { error: final.error } : {}),
      ...(artifacts.length > 0 ? { artifacts } : {}),
    };
  }

  #track(cleanup: Promise<void>): void {
    this.#cleanups.add(cleanup);
    cleanup.then(
      () => this.#cleanups.delete(cleanup),
      () => {}, // a failed cleanup stays, so close() reports it
    );
  }
}

/** Waits for `finished`, at most `windowMs`, or until `signal` aborts. Leaves no timer behind. */
async function watch(
  finished: Promise<void>,
  windowMs: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  if (signal?.aborted) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const stopWatching = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, windowMs);
    onAbort = resolve;
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  try {
    await Promise.race([finished, stopWatching]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}
