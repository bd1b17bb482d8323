import type { JsonValue } from '@ghost/core';
import type { EngineDriver } from '../host/engine-driver.js';
import { rehearseProgram } from '../host/host-rehearsal.js';
import { type HostTransport, serveProgram } from '../host/host-runtime.js';
import { prepareProgramSource } from '../program-source.js';
import { errorMessage } from '../shared/error-message.js';
import { encodeFrame, FrameDecoder } from '../shared/frame-codec.js';
import {
  type HostFrame,
  type HostLimits,
  type HostReuse,
  type ParentFrame,
  parseHostFrame,
  type ToolCallResult,
} from '../shared/protocol.js';
import { toIdentifier } from '../tool-catalog.js';

/** One tool call a program made, as the parent received it. */
export interface InProcessToolCall {
  /** The tool's name, as in {@link InProcessHostOptions.tools}. */
  readonly name: string;
  /** The arguments the program passed. */
  readonly input: JsonValue;
}

/** What the host is given, and how the parent side answers, in {@link serveProgramInProcess}. */
export interface InProcessHostOptions {
  /**
   * The names of the tools the guest sees in `tools` and `ALL_TOOLS`, each with an empty input
   * schema. Default: none.
   */
  readonly tools?: readonly string[];
  /**
   * The limits the host enforces, each defaulting to code mode's own default (`outputBytes`
   * 1,000,000, `memoryBytes` 64 MiB, `cpuSeconds` 10, `wallSeconds` 3,600; no `toolCalls` limit).
   */
  readonly limits?: Partial<HostLimits>;
  /**
   * Answers one tool call with its value; a throw fails the call in the program with the error's
   * message. Default: the call's own input, as an echo tool would.
   */
  readonly answerToolCall?: (call: InProcessToolCall) => JsonValue | Promise<JsonValue>;
  /**
   * Rehearses one small program on the driver first, as a spare process host and every worker
   * thread do before their first real program (a tool call, output and a value, on the same
   * driver). Default: `false`.
   */
  readonly rehearse?: boolean;
}

/** Options of {@link serveProgramInProcess}: the program, and what its host is given. */
export interface InProcessProgramOptions extends InProcessHostOptions {
  /** The program, as the model writes it: code mode rewrites it to return its last value. */
  readonly source: string;
}

/** Options of {@link serveSessionInProcess}: the programs, and the host's budget. */
export interface InProcessSessionOptions extends InProcessHostOptions {
  /** The programs, in order, as the model writes them. */
  readonly programs: readonly string[];
  /**
   * The host's own totals past which it serves no further program, as for `placement: 'session'`:
   * its CPU time (user and system) and its resident memory, both of this process here. Default:
   * no budget.
   */
  readonly hostBudget?: { readonly cpuSeconds: number; readonly residentBytes: number };
}

/** How one program ended, with what it printed and the tool calls it made. */
export interface InProcessProgramResult {
  /** `completed`, with its value; or `error`: a throw, a limit hit or a syntax error. */
  readonly status: 'completed' | 'error';
  /** The program's value, when it completed with one. */
  readonly value?: JsonValue;
  /** What the model would read, when it ended with an error. */
  readonly error?: string;
  /** Everything the program printed that the host sent (past `outputBytes`, its start and end). */
  readonly output: string;
  /** Bytes of output the host cut to keep within `outputBytes`. */
  readonly skippedOutputBytes: number;
  /** The calls that reached the parent, in order (not those the host refused itself). */
  readonly toolCalls: readonly InProcessToolCall[];
}

/** The defaults of `CodeModeLimits` that a host enforces. */
const defaultHostLimits: HostLimits = {
  outputBytes: 1_000_000,
  memoryBytes: 64 * 1024 * 1024,
  cpuSeconds: 10,
  wallSeconds: 3_600,
};

/** No budget: the host serves every program that completes. */
const unlimitedReuse: HostReuse = {
  cpuSeconds: Number.MAX_SAFE_INTEGER,
  residentBytes: Number.MAX_SAFE_INTEGER,
};

/**
 * Runs one program on an engine driver in this process, through code mode's own host (the same
 * code `runProcessHost` and `createThreadTask` run), with the parent's side played for it: it
 * sets the host up with the tools and limits, sends the program (rewritten as code mode rewrites
 * it), answers its tool calls and collects what the host sends. No process, no sandbox, no
 * protocol to speak: a failing case points at the driver. Resolves with the program's result once
 * the host is done; rejects when the host fails (the driver's `prepare` threw) or sends what the
 * parent would reject.
 *
 * @example
 * ```ts
 * import { serveProgramInProcess } from '@ghost/code-mode/testing';
 * import { createMyDriver } from './my-driver.js';
 *
 * const result = await serveProgramInProcess(createMyDriver(), {
 *   tools: ['echo'],
 *   source: 'console.log("hi");\nawait tools.echo({ n: 6 * 7 })',
 * });
 * expect(result).toMatchObject({ status: 'completed', value: { n: 42 }, output: 'hi\n' });
 * expect(result.toolCalls).toEqual([{ name: 'echo', input: { n: 42 } }]);
 * ```
 */
export async function serveProgramInProcess(
  driver: EngineDriver,
  options: InProcessProgramOptions,
): Promise<InProcessProgramResult> {
  const [result] = await serveOnLoopback(driver, options, [options.source], undefined);
  if (!result) throw new Error('The host ended without running the program.');
  return result;
}

/**
 * Runs programs on one host in this process, as `placement: 'session'` does: after each program
 * that completed, the host builds a fresh guest on the driver for the next, until a program fails
 * or the host passes its budget; then it ends, and the programs after are not run. Resolves with
 * the result of each program the host ran, in order; see {@link serveProgramInProcess}.
 *
 * @example
 * ```ts
 * const results = await serveSessionInProcess(createMyDriver(), {
 *   programs: ['globalThis.left = 1', 'typeof left', 'throw new Error("boom")', '3'],
 * });
 * expect(results.map((result) => result.value ?? result.status)).toEqual([1, 'undefined', 'error']);
 * ```
 */
export function serveSessionInProcess(
  driver: EngineDriver,
  options: InProcessSessionOptions,
): Promise<InProcessProgramResult[]> {
  return serveOnLoopback(driver, options, options.programs, options.hostBudget ?? unlimitedReuse);
}

/** A program the host is running: what arrived for it so far. */
interface ProgramRecord {
  readonly programId: string;
  output: string;
  skippedOutputBytes: number;
  readonly toolCalls: InProcessToolCall[];
}

/** Serves `sources` on one host over a loopback transport whose frames cross the real codec. */
async function serveOnLoopback(
  driver: EngineDriver,
  options: InProcessHostOptions,
  sources: readonly string[],
  reuse: HostReuse | undefined,
): Promise<InProcessProgramResult[]> {
  if (options.rehearse) await rehearseProgram(driver);
  const parent = new LoopbackParent(sources, options.answerToolCall ?? ((call) => call.input));
  const served = serveProgram(driver, parent.transport);
  const tools = (options.tools ?? []).map((name) => ({
    name,
    identifier: toIdentifier(name),
    description: '',
    inputSchema: {},
  }));
  const limits = { ...defaultHostLimits, ...options.limits };
  parent.deliver({ type: 'setup', tools, limits, ...(reuse ? { reuse } : {}) });
  await Promise.race([served, parent.protocolBroken]);
  return parent.results;
}

/** The parent's side of one in-process host: sends the programs, answers calls, collects results. */
class LoopbackParent {
  readonly results: InProcessProgramResult[] = [];
  /** Rejects when the host sends a frame the parent would refuse. */
  readonly protocolBroken: Promise<never>;
  readonly transport: HostTransport;
  readonly #pending: string[];
  readonly #answerToolCall: (call: InProcessToolCall) => JsonValue | Promise<JsonValue>;
  #running: ProgramRecord | undefined;
  #programsStarted = 0;
  #listener: ((frame: unknown) => void) | undefined;
  #closeListener: (() => void) | undefined;
  #isClosed = false;
  #failProtocol: (error: Error) => void = () => {};

  constructor(
    sources: readonly string[],
    answerToolCall: (call: InProcessToolCall) => JsonValue | Promise<JsonValue>,
  ) {
    this.#pending = [...sources];
    this.#answerToolCall = answerToolCall;
    this.protocolBroken = new Promise<never>((_resolve, reject) => {
      this.#failProtocol = reject;
    });
    this.protocolBroken.catch(() => {}); // raced with the host's end, which may come first
    this.transport = {
      send: (frame) => this.#receive(frame),
      onFrame: (next) => {
        this.#listener = next;
      },
      onClose: (next) => {
        this.#closeListener = next;
      },
    };
  }

  /** Sends a frame to the host through the codec, on a later turn, as a socket would. */
  deliver(frame: ParentFrame): void {
    for (const decoded of new FrameDecoder().push(encodeFrame(frame))) {
      setImmediate(() => {
        if (!this.#isClosed) this.#listener?.(decoded);
      });
    }
  }

  #close(): void {
    this.#isClosed = true;
    this.#closeListener?.();
  }

  /** A frame from the host, through the codec and the parent's own checks, as on the wire. */
  #receive(frame: HostFrame): void {
    if (this.#isClosed) return;
    try {
      const [decoded] = new FrameDecoder().push(encodeFrame(frame));
      this.#onHostFrame(parseHostFrame(decoded));
    } catch (error) {
      this.#failProtocol(new Error(`The host broke the protocol: ${errorMessage(error)}`));
      this.#close();
    }
  }

  #onHostFrame(frame: HostFrame): void {
    if (frame.type === 'ready') {
      this.#executeNext();
      return;
    }
    if (frame.type === 'hello') return;
    const program = this.#running;
    if (!program || frame.programId !== program.programId) {
      throw new Error(`The host sent a '${frame.type}' frame for a program that is not running.`);
    }
    switch (frame.type) {
      case 'output':
        program.output += frame.text;
        program.skippedOutputBytes += frame.skippedBytes ?? 0;
        return;
      case 'tool_calls':
        for (const { name, input } of frame.calls) program.toolCalls.push({ name, input });
        void this.#answer(program.programId, frame.calls);
        return;
      case 'done': {
        const { status, value, error } = frame;
        this.#running = undefined;
        this.results.push({
          status,
          ...(value === undefined ? {} : { value }),
          ...(error === undefined ? {} : { error }),
          output: program.output,
          skippedOutputBytes: program.skippedOutputBytes,
          toolCalls: program.toolCalls,
        });
        return;
      }
    }
  }

  /** Sends the next program the parser accepts; a syntax error is that program's result, as in a session. */
  #executeNext(): void {
    for (let source = this.#pending.shift(); source !== undefined; source = this.#pending.shift()) {
      this.#programsStarted += 1;
      const programId = `p${this.#programsStarted}`;
      const prepared = prepareProgramSource(source);
      if (prepared.ok) {
        this.#running = { programId, output: '', skippedOutputBytes: 0, toolCalls: [] };
        this.deliver({ type: 'execute', programId, source: prepared.source });
        return;
      }
      this.results.push({
        status: 'error',
        error: prepared.error,
        output: '',
        skippedOutputBytes: 0,
        toolCalls: [],
      });
    }
    this.#close(); // nothing left to run: the parent closes the channel, as when a session closes
  }

  /** Answers one batch of calls, in one frame, as the parent does. */
  async #answer(programId: string, calls: readonly { callId: string; name: string; input: JsonValue }[]) {
    const answers: ToolCallResult[] = [];
    for (const { callId, name, input } of calls) {
      try {
        answers.push({ callId, ok: true, value: await this.#answerToolCall({ name, input }) });
      } catch (error) {
        answers.push({ callId, ok: false, error: errorMessage(error) });
      }
    }
    this.deliver({ type: 'tool_results', programId, results: answers });
  }
}
