import type { HostLimits } from '../shared/protocol.js';
import { formatStall, type HostProgram, type ProgramCompletion } from './engine-driver.js';
import { formatInterrupt, type InterruptReason } from './interrupt.js';

/**
 * The host's own `Promise.prototype.then`, taken when this module loads, before any program runs:
 * a guest that shares the host's promise machinery (a `node:vm` context) may replace its own
 * `then`, and the host must still see its promises settle.
 */
const capturedThen = Promise.prototype.then;

/**
 * Calls the host's own `Promise.prototype.then` (taken before any program ran) on `promise`, a
 * promise a guest made. Use it instead of `promise.then(...)` for every guest promise the host
 * watches: the program may have replaced the guest's `then`, or the promise's own `then`.
 *
 * @example
 * ```js
 * hostThen(completion, (json) => { outcome = JSON.parse(json); });
 * ```
 */
export function hostThen(
  promise: unknown,
  onFulfilled: (value: unknown) => void,
  onRejected?: (reason: unknown) => void,
): void {
  Reflect.apply(capturedThen, promise, [onFulfilled, onRejected]);
}

let isRejectionHandlerInstalled = false;

/**
 * `exit()` ends a program by throwing, so a guest promise may reject with no handler; that is the
 * guest's business, but Node ends the process for an unhandled rejection. This handler ignores a
 * rejected promise of another realm (a guest's) and, when it is the process's only handler,
 * rethrows the host's own, as Node would without it. Installed once per process (or thread).
 */
function ignoreGuestRejections(): void {
  if (isRejectionHandlerInstalled) return;
  isRejectionHandlerInstalled = true;
  process.on('unhandledRejection', (reason, promise) => {
    if (promise instanceof Promise && process.listenerCount('unhandledRejection') === 1) throw reason;
  });
}

/**
 * What an engine gives {@link GuestTurnLoop}: the prelude's control functions (see `GuestControl`)
 * and the engine's job queue, for one program. Each may be asynchronous, and each may throw; the
 * loop then ends the program with {@link GuestTurns.failureCompletion}.
 */
export interface GuestTurns {
  /** The prelude's `deliverResults(json)`: hands one batch to the guest, returns how many calls still wait. */
  deliverResults(resultsJson: string): number | Promise<number>;
  /**
   * Runs the jobs (microtasks) the guest queued since the last turn: the microtask pump. Called
   * every turn, after results were delivered, so the program continues.
   */
  runJobs(): void | Promise<void>;
  /** True while the guest still has jobs queued after {@link GuestTurns.runJobs}; omitted, none are. */
  hasPendingJobs?(): boolean;
  /** The prelude's `takeCalls()`: the JSON text of the calls queued since, or `undefined`. */
  takeCalls(): string | undefined | Promise<string | undefined>;
  /** The program's completion once the prelude's `settle` resolved it, else `undefined`. */
  outcome(): ProgramCompletion | undefined;
  /** True once the program's own promise settled (see `formatStall`). */
  hasProgramEnded(): boolean;
  /** Why the engine's own watchdog stopped the guest (an interrupt handler), if it did. */
  interruptReason?(): InterruptReason | undefined;
  /** The completion for an error a turn threw; omitted, the error's name and message. */
  failureCompletion?(error: unknown): ProgramCompletion;
}

/**
 * The turn loop of a host engine: runs one program in a guest, turn by turn, and keeps the rules
 * every engine's host must keep, so an engine supplies only its guest ({@link GuestTurns}).
 *
 * - The host's own `Promise.prototype.then` is taken when `@ghost/code-mode/host` loads (see
 *   {@link hostThen}), before any program can replace it.
 * - A process-level `unhandledRejection` handler ignores guest rejections: `exit()` ends a program
 *   by throwing.
 * - Every turn runs the guest's jobs (`runJobs`), then sends the calls it queued, and hands it the
 *   results that arrived.
 * - After every turn it checks the stop flag and `wallSeconds` (counted from `run`), and ends the
 *   program with `formatInterrupt`'s error; a program that waits for nothing ends with
 *   `formatStall`'s.
 *
 * @example
 * ```ts
 * async run(program) {
 *   this.#turns = new GuestTurnLoop(program, this.#limits);
 *   return this.#turns.run({ runJobs, takeCalls, deliverResults, outcome, hasProgramEnded });
 * }
 * deliverResults(resultsJson) { this.#turns?.deliverResults(resultsJson); }
 * dispose() { this.#turns?.close(); }
 * ```
 */
export class GuestTurnLoop {
  readonly #program: HostProgram;
  readonly #limits: HostLimits;
  readonly #wallDeadline: number;
  #deliveries: string[] = [];
  #callsInFlight = 0;
  #isClosed = false;
  #wake: (() => void) | undefined;

  constructor(program: HostProgram, limits: HostLimits) {
    ignoreGuestRejections();
    this.#program = program;
    this.#limits = limits;
    this.#wallDeadline = Date.now() + limits.wallSeconds * 1000;
  }

  /** Queues tool results for the next turn (the driver's `PreparedGuest.deliverResults`). */
  deliverResults(resultsJson: string): void {
    if (this.#isClosed) return;
    this.#deliveries.push(resultsJson);
    this.#wake?.();
  }

  /**
   * Asks for a turn now, for a guest that reports its end from outside a turn (an engine's
   * callback): a loop that waits for tool results reads the outcome at once.
   */
  wake(): void {
    this.#wake?.();
  }

  /** Drops waiting results and ends a loop that waits (the driver's `dispose`). */
  close(): void {
    this.#isClosed = true;
    this.#deliveries = [];
    this.#wake?.();
  }

  /** Runs the program to its end; resolves with its completion, never rejects for the guest's errors. */
  async run(turns: GuestTurns): Promise<ProgramCompletion> {
    try {
      return await this.#turn(turns);
    } catch (error) {
      return turns.failureCompletion?.(error) ?? errorCompletion(error);
    } finally {
      this.#isClosed = true;
      this.#deliveries = [];
    }
  }

  async #turn(turns: GuestTurns): Promise<ProgramCompletion> {
    for (;;) {
      for (const resultsJson of this.#takeDeliveries()) {
        this.#callsInFlight = await turns.deliverResults(resultsJson);
      }
      await turns.runJobs();
      const engineReason = turns.interruptReason?.();
      if (engineReason !== undefined) return this.#interrupted(engineReason);
      const outcome = turns.outcome();
      if (outcome !== undefined) return outcome; // calls still queued now are never run
      const reason = this.#limitReached();
      if (reason !== undefined) return this.#interrupted(reason);
      const calls = await turns.takeCalls();
      // An engine that reports its end from a callback may have ended while the calls were taken.
      const ended = turns.outcome();
      if (ended !== undefined) return ended;
      if (typeof calls === 'string') {
        this.#callsInFlight += countEntries(calls);
        this.#program.sendCalls(calls);
      }
      if (this.#deliveries.length > 0 || turns.hasPendingJobs?.() === true) continue;
      // The guest runs only when a tool result wakes it: with no call in flight, nothing ever will.
      if (this.#callsInFlight === 0) return { status: 'error', error: formatStall(turns.hasProgramEnded()) };
      await new Promise<void>((wake) => {
        this.#wake = wake;
      });
      this.#wake = undefined;
      if (this.#isClosed)
        return { status: 'error', error: 'The program was disposed of before it finished.' };
    }
  }

  #limitReached(): InterruptReason | undefined {
    if (this.#program.isStopRequested) return 'stop';
    if (Date.now() > this.#wallDeadline) return 'wall';
    return undefined;
  }

  #interrupted(reason: InterruptReason): ProgramCompletion {
    return { status: 'error', error: formatInterrupt(reason, this.#limits) };
  }

  #takeDeliveries(): string[] {
    const deliveries = this.#deliveries;
    this.#deliveries = [];
    return deliveries;
  }
}

/** How many entries a JSON array of calls holds; anything else counts none. */
function countEntries(json: string): number {
  try {
    const parsed: unknown = JSON.parse(json);
    return Array.isArray(parsed) ? parsed.length : 0;
  } catch {
    return 0;
  }
}

function errorCompletion(error: unknown): ProgramCompletion {
  try {
    if (error instanceof Error) return { status: 'error', error: `${error.name}: ${error.message}` };
    return { status: 'error', error: `Uncaught ${String(error)}` };
  } catch {
    return { status: 'error', error: 'The program threw a value that cannot be described.' };
  }
}
