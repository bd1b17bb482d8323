import { errorMessage } from '../shared/error-message.js';
import { exceedsJsonDepth } from '../shared/json-depth.js';
import { limitProgramCompletion } from '../shared/program-completion-limit.js';
import {
  type ExecuteFrame,
  formatToolCallLimit,
  type GuestToolCall,
  type HostFrame,
  type HostLimits,
  type HostReuse,
  maxValueDepth,
  type ParentFrame,
  parseParentFrame,
  type SetupFrame,
  type ToolCallResult,
} from '../shared/protocol.js';
import {
  type EngineDriver,
  type HostProgram,
  isJavaScript,
  type PreparedGuest,
  type ProgramCompletion,
} from './engine-driver.js';
import { guestPrelude, wrapProgram } from './guest-prelude.js';
import { HostOutput } from './host-output.js';

/** How a host talks to the parent: frames out, frames in. */
export interface HostTransport {
  send(frame: HostFrame): void;
  /** Registers the one listener for parent frames, already parsed from the wire. */
  onFrame(listener: (frame: unknown) => void): void;
  /**
   * Registers the listener for the parent closing the channel, where the transport outlives it
   * (in process). A process host exits instead.
   */
  onClose?(listener: () => void): void;
}

/**
 * The calls a guest queued that the parent may receive, and refusals for the rest: calls past
 * `limits.toolCalls` (the parent treats a host that sends more as broken) and calls whose
 * arguments nest deeper than the protocol carries.
 */
function screenCalls(
  calls: readonly GuestToolCall[],
  limits: HostLimits,
  alreadySent: number,
): { sent: GuestToolCall[]; refused: ToolCallResult[] } {
  const sent: GuestToolCall[] = [];
  const refused: ToolCallResult[] = [];
  for (const call of calls) {
    if (limits.toolCalls !== undefined && alreadySent + sent.length >= limits.toolCalls) {
      refused.push({ callId: call.callId, ok: false, error: formatToolCallLimit(limits.toolCalls) });
    } else if (exceedsJsonDepth(call.input, maxValueDepth)) {
      refused.push({
        callId: call.callId,
        ok: false,
        error: `The arguments of tools.${call.name} nest deeper than ${maxValueDepth} levels of arrays and objects, more than code mode carries. Pass flatter arguments.`,
      });
    } else {
      sent.push(call);
    }
  }
  return { sent, refused };
}

/**
 * Serves a program on `transport`: builds the guest when `setup` arrives and answers `ready`,
 * runs the program `execute` brings, batches its tool calls and output into frames, and sends
 * `done`, its value and error bounded by `limits.outputBytes`. A host set up with `reuse` then builds a fresh guest and answers `ready` again, after
 * each program that completed, while it stays within the reuse budget (see `HostReuse`).
 * Resolves once the last `done` is sent; rejects when the parent breaks the protocol.
 */
export function serveProgram(
  driver: EngineDriver,
  transport: HostTransport,
  isStopRequestedOutside: () => boolean = () => false,
): Promise<void> {
  return new Promise<void>((resolveServed, rejectServed) => {
    const server = new ProgramServer(driver, transport, isStopRequestedOutside, {
      resolve: resolveServed,
      reject: rejectServed,
    });
    transport.onFrame((raw) => server.onParentFrame(raw));
    transport.onClose?.(() => server.onParentClosed());
  });
}

/** The program a host runs now, and whether the parent asked it to stop. */
interface ServedProgram {
  readonly programId: string;
  isStopRequested: boolean;
}

/** The state of {@link serveProgram}: the setup, the guest prepared for the next program, the program running. */
class ProgramServer {
  readonly #driver: EngineDriver;
  /** JavaScript programs run as an async function body; other languages' as written. */
  readonly #wrapsPrograms: boolean;
  readonly #transport: HostTransport;
  readonly #isStopRequestedOutside: () => boolean;
  readonly #served: { readonly resolve: () => void; readonly reject: (error: unknown) => void };
  #setup: SetupFrame | undefined;
  #guest: Promise<PreparedGuest> | undefined;
  #program: ServedProgram | undefined;
  #running: PreparedGuest | undefined;
  #isParentClosed = false;

  constructor(
    driver: EngineDriver,
    transport: HostTransport,
    isStopRequestedOutside: () => boolean,
    served: { readonly resolve: () => void; readonly reject: (error: unknown) => void },
  ) {
    this.#driver = driver;
    this.#wrapsPrograms = isJavaScript(driver);
    this.#transport = transport;
    this.#isStopRequestedOutside = isStopRequestedOutside;
    this.#served = served;
  }

  onParentFrame(raw: unknown): void {
    let frame: ParentFrame;
    try {
      frame = parseParentFrame(raw);
    } catch (error) {
      this.#served.reject(error);
      return;
    }
    switch (frame.type) {
      case 'setup':
        if (this.#setup) {
          this.#served.reject(new Error('A host is set up once; it got a second setup.'));
          return;
        }
        this.#setup = frame;
        this.#prepareGuest(frame);
        return;
      case 'execute':
        this.#onExecute(frame);
        return;
      case 'stop':
        if (this.#program?.programId === frame.programId) this.#program.isStopRequested = true;
        return;
      case 'hurry':
        return; // for a host still warming up, before hello
      case 'tool_results':
        if (this.#program?.programId !== frame.programId) return;
        this.#running?.deliverResults(JSON.stringify(frame.results));
        return;
    }
  }

  /**
   * The parent is gone: a program running stops, and the host ends after it (at once between
   * programs, freeing the guest it prepared for the next).
   */
  onParentClosed(): void {
    this.#isParentClosed = true;
    if (this.#program) {
      this.#program.isStopRequested = true;
      return;
    }
    const prepared = this.#guest;
    this.#guest = undefined;
    if (!prepared) {
      this.#served.resolve();
      return;
    }
    prepared
      .then(
        (guest) => guest.dispose(),
        () => {},
      )
      .then(this.#served.resolve, this.#served.reject);
  }

  #prepareGuest({ tools, limits }: SetupFrame): void {
    const preparing = this.#driver.prepare({
      prelude: guestPrelude,
      toolsJson: JSON.stringify(tools),
      limits,
    });
    this.#guest = preparing;
    preparing.then(
      () => this.#transport.send({ type: 'ready' }),
      (error: unknown) => this.#served.reject(error),
    );
  }

  #onExecute(frame: ExecuteFrame): void {
    const settings = this.#setup;
    const preparing = this.#guest;
    if (!settings || !preparing) {
      this.#served.reject(new Error('A host needs setup before execute.'));
      return;
    }
    if (this.#program) {
      this.#served.reject(new Error('A host runs one program at a time; it got a second execute.'));
      return;
    }
    const started: ServedProgram = { programId: frame.programId, isStopRequested: false };
    this.#program = started;
    this.#guest = undefined;
    void this.#execute(frame, settings, preparing, started).then((completion) => {
      const isReusable = completion.status === 'completed' && !this.#isParentClosed;
      if (isReusable && settings.reuse && isWithin(settings.reuse)) {
        this.#program = undefined;
        this.#prepareGuest(settings);
      } else {
        this.#served.resolve();
      }
    }, this.#served.reject);
  }

  async #execute(
    frame: ExecuteFrame,
    { limits }: SetupFrame,
    preparing: Promise<PreparedGuest>,
    state: ServedProgram,
  ): Promise<ProgramCompletion> {
    const { programId } = frame;
    const output = new HostOutput(limits.outputBytes, (chunk) =>
      this.#transport.send({ type: 'output', programId, ...chunk }),
    );
    const hostProgram = this.#hostProgram(frame, limits, output, state);
    let completion: ProgramCompletion;
    let prepared: PreparedGuest | undefined;
    try {
      prepared = await preparing;
      this.#running = prepared;
      completion = await prepared.run(hostProgram);
    } catch (error) {
      completion = { status: 'error', error: formatEngineFailure(this.#driver.engine, error) };
    }
    this.#running = undefined;
    try {
      output.finish();
    } catch (error) {
      completion = {
        status: 'error',
        error: `The program's output could not be sent: ${errorMessage(error)}`,
      };
    }
    completion = limitProgramCompletion(completion, limits.outputBytes);
    sendDoneFrame(this.#transport, programId, completion);
    // Freeing the guest costs a fraction of a millisecond; the result goes first.
    prepared?.dispose();
    return completion;
  }

  /** The program as the engine sees it: its source, and where its output and tool calls go. */
  #hostProgram(
    frame: ExecuteFrame,
    limits: HostLimits,
    output: HostOutput,
    state: ServedProgram,
  ): HostProgram {
    const { programId } = frame;
    const transport = this.#transport;
    const isStopRequestedOutside = this.#isStopRequestedOutside;
    const runningGuest = () => this.#running;
    let callsSent = 0;
    return {
      programId,
      source: this.#wrapsPrograms ? wrapProgram(frame.source) : frame.source,
      write: (text) => output.write(text),
      sendCalls: (callsJson) => {
        const { sent, refused } = screenCalls(JSON.parse(callsJson) as GuestToolCall[], limits, callsSent);
        output.flush(); // output written before a call reaches the parent before the call
        if (sent.length > 0) {
          callsSent += sent.length;
          transport.send({ type: 'tool_calls', programId, calls: sent });
        }
        if (refused.length > 0) {
          // Answered from the event loop, never from inside the engine's turn, like the parent's.
          const guest = runningGuest();
          const resultsJson = JSON.stringify(refused);
          setImmediate(() => guest?.deliverResults(resultsJson));
        }
      },
      get isStopRequested() {
        // A thread host's stop flag is shared memory: it is seen even while the program
        // keeps the thread too busy to read a stop frame.
        return state.isStopRequested || isStopRequestedOutside();
      },
    };
  }
}

/**
 * What the model reads when the engine itself failed. Most often that is the host's own stack
 * overflowing under the engine: a builtin of an engine compiled to WebAssembly (JSON.stringify,
 * String() on an array) recursing through a value nested thousands of levels deep, which the
 * engine's own stack limit does not see. Said so, rather than "the engine failed".
 */
function formatEngineFailure(engine: string, error: unknown): string {
  if (error instanceof RangeError && /call stack/i.test(error.message)) {
    return `The program nested too deeply for the ${engine} engine: its host ran out of stack (${error.message}), as a builtin such as JSON.stringify or String() does on a value nested thousands of levels deep. Keep values flatter (values crossing to tools or back are limited to ${maxValueDepth} levels).`;
  }
  return `The ${engine} engine failed: ${errorMessage(error)}`;
}

/**
 * Sends `done`. A frame that cannot be encoded (its value too large for the frame cap, which
 * `outputBytes` keeps it under) still ends the program, with an error that says why, rather than
 * a host that crashed without a word.
 */
function sendDoneFrame(transport: HostTransport, programId: string, completion: ProgramCompletion): void {
  try {
    transport.send({ type: 'done', programId, ...completion });
  } catch (error) {
    transport.send({
      type: 'done',
      programId,
      status: 'error',
      error: `The program's result could not be sent to the parent: ${errorMessage(error)}`,
    });
  }
}

/** Whether this host's own totals leave room for another program (see `HostReuse`). */
function isWithin(reuse: HostReuse): boolean {
  const cpu = process.cpuUsage();
  return (cpu.user + cpu.system) / 1e6 < reuse.cpuSeconds && process.memoryUsage.rss() < reuse.residentBytes;
}
