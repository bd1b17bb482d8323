import {
  type EngineDriver,
  formatInterrupt,
  type GuestSetup,
  GuestTurnLoop,
  type HostLimits,
  type HostProgram,
  type InterruptReason,
  type PreparedGuest,
  type ProgramCompletion,
} from '@ghost/code-mode/host';
import type ivm from 'isolated-vm';
import { programScript, v8Bootstrap } from './v8-bootstrap.js';

/** isolated-vm's smallest memory limit, in MiB. */
const minimumMemoryLimitMiB = 8;

/**
 * isolated-vm's heap limit is a guideline (its documentation says a determined program can use
 * two to three times it), and some allocations pass it unnoticed (a flattened 256 MiB string did
 * under a 32 MiB limit), so the host also watches its own resident memory: a program
 * may grow it by this many times `memoryBytes` (the heap's own overhead fits well inside), and the
 * sandbox's OS limit, where it has one, backs this check in turn.
 */
const residentGrowthFactor = 2;

/** How often the host looks at the isolate's CPU time, its memory, the clock and the stop flag. */
const watchIntervalMs = 10;

/**
 * V8 lost control of the isolate (an allocation it could not refuse): nothing in this process
 * can be trusted any more. isolated-vm's advice is to abort: the parent sees the host die,
 * reports the program as failed, and starts a fresh host for the next.
 */
function onCatastrophicError(message: string): void {
  process.stderr.write(`ghost v8 host: catastrophic V8 error: ${message}\n`);
  process.abort();
}

/**
 * The V8 driver: each guest is a fresh isolate (its own heap, capped at `memoryBytes`) with one
 * context, the shared prelude installed through {@link v8Bootstrap}, built before the program
 * arrives. The program runs off the host's main thread, so the host keeps watching its CPU time,
 * the wall clock and the stop flag, and disposes of the isolate at a limit.
 *
 * isolated-vm's first compile, run, callback and result in a process cost a few milliseconds
 * more than later ones; the host's rehearsal (see `runProcessHost`
 * in `@ghost/code-mode/host`) runs one small program in a throwaway isolate first, so the real
 * program does not pay for them.
 *
 * `isolatedVm` is the isolated-vm module the host loaded: the one the engine checked for the
 * Node.js running it.
 */
export function createV8Driver(isolatedVm: typeof ivm): EngineDriver {
  return {
    engine: 'v8',
    prepare: (setup) => V8Guest.create(isolatedVm, setup),
  };
}

/** The bootstrap's `exchange`, inside the guest: takes queued tool calls, delivers results. */
type Exchange = (op: 'take' | 'deliver', text?: string) => string | undefined;

/** One guest: an isolate and context with the prelude installed, for one program. */
class V8Guest implements PreparedGuest {
  readonly #isolate: ivm.Isolate;
  readonly #context: ivm.Context;
  readonly #limits: HostLimits;
  readonly #isolatedVm: typeof ivm;
  #exchange: ivm.Reference<Exchange> | undefined;
  /** Tool calls passed on whose results have not come back. */
  #callsInFlight = 0;
  /** The program's own promise has settled (its completion may still be on its way). */
  #hasEnded = false;
  /** The completion the prelude posted. */
  #outcome: ProgramCompletion | undefined;
  #program: HostProgram | undefined;
  #turns: GuestTurnLoop | undefined;
  #interrupted: InterruptReason | undefined;
  /** Ends `run` at once: a limit disposed of the isolate, or the guest was disposed of. */
  #finish: ((completion: ProgramCompletion) => void) | undefined;
  #watch: ReturnType<typeof setInterval> | undefined;
  #isDisposed = false;

  static async create(isolatedVm: typeof ivm, setup: GuestSetup): Promise<V8Guest> {
    const memoryLimit = Math.max(minimumMemoryLimitMiB, Math.ceil(setup.limits.memoryBytes / 1024 / 1024));
    const isolate = new isolatedVm.Isolate({ memoryLimit, onCatastrophicError });
    try {
      const context = await isolate.createContext();
      const guest = new V8Guest(isolatedVm, isolate, context, setup.limits);
      await guest.#install(setup);
      return guest;
    } catch (error) {
      if (!isolate.isDisposed) isolate.dispose();
      throw error;
    }
  }

  private constructor(
    isolatedVm: typeof ivm,
    isolate: ivm.Isolate,
    context: ivm.Context,
    limits: HostLimits,
  ) {
    this.#isolatedVm = isolatedVm;
    this.#isolate = isolate;
    this.#context = context;
    this.#limits = limits;
  }

  async #install({ prelude, toolsJson }: GuestSetup): Promise<void> {
    const post = new this.#isolatedVm.Callback((op: unknown, text: unknown) => this.#onPost(op, text), {
      ignored: true,
    });
    // Output waits for the host: past outputBytes it is dropped here, never queued on the way.
    const write = new this.#isolatedVm.Callback((text: unknown) => this.#onWrite(text), { sync: true });
    const bootstrap = await this.#context.eval(v8Bootstrap(prelude), {
      filename: 'bootstrap.js',
      reference: true,
    });
    this.#exchange = (await bootstrap.apply(undefined, [post, write, toolsJson], {
      result: { reference: true },
    })) as ivm.Reference<Exchange>;
    bootstrap.release();
  }

  run(program: HostProgram): Promise<ProgramCompletion> {
    this.#program = program;
    const ended = new Promise<ProgramCompletion>((resolve) => {
      this.#finish = resolve;
    });
    this.#watchLimits(program);
    const turns = this.#runTurns(program).catch((error: unknown) => this.#failureCompletion(error));
    return Promise.race([turns, ended]).then((completion) => {
      this.#finish = undefined;
      this.#stopWatching();
      const reason = this.#interrupted;
      return reason === undefined
        ? completion
        : { status: 'error', error: formatInterrupt(reason, this.#limits) };
    });
  }

  /**
   * Runs the program in code mode's turn loop. Its first turn runs the program's start; each
   * later one a batch of tool results and what it wakes. isolated-vm runs the isolate's
   * microtasks at the end of every call into it, so a turn needs no pump of its own.
   */
  async #runTurns(program: HostProgram): Promise<ProgramCompletion> {
    let script: ivm.Script;
    try {
      script = await this.#isolate.compileScript(programScript(program.source), { filename: 'program.js' });
    } catch (error) {
      // The parent parses every program first; this is V8 disagreeing with that parser.
      return { status: 'error', error: formatError(error) };
    }
    const turns = new GuestTurnLoop(program, this.#limits);
    this.#turns = turns;
    let isStarted = false;
    return turns.run({
      runJobs: async () => {
        if (isStarted) return;
        isStarted = true;
        await this.#enter(() => script.run(this.#context));
        script.release();
      },
      takeCalls: () => this.#takeCalls(),
      deliverResults: (resultsJson) => this.#deliver(resultsJson),
      outcome: () => this.#outcome,
      hasProgramEnded: () => this.#hasEnded,
      interruptReason: () => this.#interrupted,
      failureCompletion: (error) => this.#failureCompletion(error),
    });
  }

  /** Runs one stretch of guest code: the program's start, or a tool result and what it wakes. */
  async #enter(stretch: () => Promise<unknown>): Promise<void> {
    try {
      await stretch();
    } catch (error) {
      // A live isolate only reports a rejection the program left unhandled, which, as in any
      // JavaScript runtime, does not end the program.
      if (this.#isolate.isDisposed || isMemoryLimit(error)) throw error;
    }
  }

  /** The tool calls the guest queued, taken together so one stretch's calls reach the parent in one frame. */
  async #takeCalls(): Promise<string | undefined> {
    const exchange = this.#exchange as ivm.Reference<Exchange>;
    let calls: unknown;
    await this.#enter(async () => {
      calls = await exchange.apply(undefined, ['take'], { result: { copy: true } });
    });
    if (typeof calls !== 'string') return undefined;
    this.#callsInFlight += countCalls(calls);
    return calls;
  }

  async #deliver(resultsJson: string): Promise<number> {
    const exchange = this.#exchange as ivm.Reference<Exchange>;
    this.#callsInFlight -= countCalls(resultsJson);
    await this.#enter(() => exchange.apply(undefined, ['deliver', resultsJson]));
    return this.#callsInFlight;
  }

  deliverResults(resultsJson: string): void {
    if (this.#isolate.isDisposed) return;
    this.#turns?.deliverResults(resultsJson);
  }

  #watchLimits(program: HostProgram): void {
    const isolate = this.#isolate;
    const limits = this.#limits;
    const cpuAtStart = isolate.cpuTime;
    const residentAtStart = process.memoryUsage.rss();
    const residentAllowance = residentGrowthFactor * limits.memoryBytes;
    const cpuLimitNs = BigInt(Math.round(limits.cpuSeconds * 1e9));
    const wallDeadline = Date.now() + limits.wallSeconds * 1000;
    const check = (): InterruptReason | undefined => {
      if (program.isStopRequested) return 'stop';
      if (isolate.isDisposed) return undefined;
      if (isolate.cpuTime - cpuAtStart > cpuLimitNs) return 'cpu';
      if (process.memoryUsage.rss() - residentAtStart > residentAllowance) return 'memory';
      if (Date.now() > wallDeadline) return 'wall';
      return undefined;
    };
    this.#watch = setInterval(() => {
      const reason = check();
      if (reason !== undefined) this.#interrupt(reason);
    }, watchIntervalMs);
  }

  #stopWatching(): void {
    if (this.#watch !== undefined) clearInterval(this.#watch);
    this.#watch = undefined;
  }

  /** Ends the program at a limit: disposing of the isolate terminates whatever it is running. */
  #interrupt(reason: InterruptReason): void {
    this.#interrupted ??= reason;
    if (!this.#isolate.isDisposed) this.#isolate.dispose();
    this.#complete({ status: 'error', error: 'interrupted' });
  }

  /** A call into the isolate failed: the isolate is gone (a limit), or V8 refused the program. */
  #failureCompletion(error: unknown): ProgramCompletion {
    if (this.#interrupted === undefined && isMemoryLimit(error)) {
      this.#interrupted = 'memory';
    }
    return { status: 'error', error: formatError(error) };
  }

  #complete(completion: ProgramCompletion): void {
    const finish = this.#finish;
    this.#finish = undefined;
    this.#turns?.close();
    finish?.(completion);
  }

  /** What the guest posts; the guest is untrusted, so nothing is assumed about the values. */
  #onPost(op: unknown, text: unknown): void {
    const program = this.#program;
    if (program === undefined || this.#finish === undefined || typeof text !== 'string') return;
    if (op === 'ended') {
      this.#hasEnded = true;
    } else if (op === 'done') {
      this.#outcome ??= parseCompletion(text);
      this.#turns?.wake();
    }
  }

  /** A batch of output from the guest; it may be anything, so only a string is taken. */
  #onWrite(text: unknown): void {
    const program = this.#program;
    if (program === undefined || this.#finish === undefined || typeof text !== 'string') return;
    program.write(text);
  }

  dispose(): void {
    if (this.#isDisposed) return;
    this.#isDisposed = true;
    this.#stopWatching();
    this.#complete({ status: 'error', error: 'The program was disposed of before it finished.' });
    if (!this.#isolate.isDisposed) this.#isolate.dispose();
  }
}

function isMemoryLimit(error: unknown): boolean {
  return error instanceof Error && /memory limit/.test(error.message);
}

/** How many entries a JSON array of calls or results holds; anything else counts none. */
function countCalls(json: string): number {
  try {
    const parsed: unknown = JSON.parse(json);
    return Array.isArray(parsed) ? parsed.length : 0;
  } catch {
    return 0;
  }
}

function formatError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return `Uncaught ${String(error)}`;
}

/** The prelude's completion JSON, checked: the guest wrote it, so it may be anything. */
function parseCompletion(json: string): ProgramCompletion {
  try {
    const parsed = JSON.parse(json) as { status?: unknown; value?: unknown; error?: unknown };
    if (parsed.status === 'completed') {
      return 'value' in parsed
        ? { status: 'completed', value: parsed.value as ProgramCompletion['value'] & {} }
        : { status: 'completed' };
    }
    if (parsed.status === 'error' && typeof parsed.error === 'string') {
      return { status: 'error', error: parsed.error };
    }
  } catch {
    // Reported below.
  }
  return { status: 'error', error: 'The program ended with a completion the host could not read.' };
}
