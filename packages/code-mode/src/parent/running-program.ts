import type { JsonValue } from '@ghost/core';
import type { ProgramStatus } from '../engine.js';
import type { CodeModeLimits } from '../limits.js';
import { errorMessage } from '../shared/error-message.js';
import { formatUntrusted } from '../shared/format-untrusted.js';
import { maxFrameBytes } from '../shared/frame-codec.js';
import { formatBytes } from '../shared/head-and-tail.js';
import { limitProgramCompletion } from '../shared/program-completion-limit.js';
import type { GuestToolCall, HostFrame, ToolCallResult } from '../shared/protocol.js';
import type { MeasuredToolCallResult, ProgramToolCalls } from '../tool-broker.js';
import type { HostLink } from './host-link.js';
import { ProgramOutput } from './program-output.js';

/** How a program ended. */
export interface ProgramFinalState {
  readonly status: Exclude<ProgramStatus, 'still_working'>;
  readonly value?: JsonValue;
  readonly error?: string;
}

/** What a program is run with. */
export interface RunningProgramOptions {
  readonly id: string;
  /**
   * The program's host, once it is ready; rejects when none could be started. The program's own
   * limits run from the start, so a host that never gets ready holds it no longer than they allow.
   */
  readonly host: Promise<HostLink>;
  /** Stops readying the host (and releases it), for a program that ended before it was ready. */
  readonly abandonHost: () => void;
  readonly calls: ProgramToolCalls;
  readonly limits: CodeModeLimits;
  readonly controlCallId: string;
  /** Receives the host's link for its next program, when this one completed on a reusable host. */
  readonly onHostReusable: (next: HostLink) => void;
}

/**
 * How many bytes of `tool_calls` frames whose calls have not finished a program may hold in the
 * parent: two full frames. The arguments of calls waiting for their turn stay in memory, so a
 * host cannot make the parent hold more than this by sending calls faster than tools run.
 */
const heldCallBytesLimit = 2 * maxFrameBytes;

function failure(callId: string, error: string): MeasuredToolCallResult {
  const result: ToolCallResult = { callId, ok: false, error };
  return { result, bytes: Buffer.byteLength(JSON.stringify(result)) };
}

/**
 * One program on one host, from `exec` until its final result is delivered. It checks every
 * frame of its host against what the program may send (its own id, call ids used once, no more
 * calls than `limits.toolCalls` leaves, no more waiting call arguments than the parent holds),
 * ends the program with a protocol error the model can read when a frame breaks a rule, and
 * batches tool results into frames under the frame cap.
 */
export class RunningProgram {
  readonly id: string;
  readonly calls: ProgramToolCalls;
  readonly output: ProgramOutput;
  readonly finished: Promise<void>;
  /** Settles once the host is released; `stop` waits for it. */
  cleanup: Promise<void> | undefined;
  controlCallId: string;
  final: ProgramFinalState | undefined;
  /** Set when the program's host went on to serve the session's next program. */
  isHostReused = false;
  /** Why no host could be started for the program, when none could: it then ended with an error. */
  hostFailure: unknown;
  /** The program's host, once it is ready and the program was sent to it. */
  #link: HostLink | undefined;
  readonly #host: Promise<HostLink>;
  readonly #abandonHost: () => void;
  readonly #limits: CodeModeLimits;
  readonly #onHostReusable: (next: HostLink) => void;
  #markFinished: () => void = () => {};
  #wallTimer: ReturnType<typeof setTimeout> | undefined;
  readonly #callIds = new Set<string>();
  #heldCallBytes = 0;
  #results: ToolCallResult[] = [];
  #resultsBytes = 0;
  #isFlushQueued = false;
  /** The bytes of a `tool_results` frame of this program with no results. */
  readonly #resultsFrameBytes: number;

  constructor(options: RunningProgramOptions) {
    const { id, limits } = options;
    this.id = id;
    this.#host = options.host;
    this.#abandonHost = options.abandonHost;
    this.calls = options.calls;
    this.#limits = limits;
    this.#onHostReusable = options.onHostReusable;
    this.output = new ProgramOutput(limits.outputBytes);
    this.controlCallId = options.controlCallId;
    this.#resultsFrameBytes = Buffer.byteLength(
      JSON.stringify({ type: 'tool_results', programId: id, results: [] }),
    );
    this.finished = new Promise<void>((resolve) => {
      this.#markFinished = resolve;
    });
    // The lifetime counts from exec and is never extended; an expired program is ended even if
    // nobody observes it again.
    this.#wallTimer = setTimeout(() => {
      const when = this.#link === undefined ? ' before its engine host was ready' : '';
      this.finish({
        status: 'error',
        error: `The program ran past its time limit of ${limits.wallSeconds} s (limits.wallSeconds) and was stopped${when}.`,
      });
    }, limits.wallSeconds * 1000);
    this.#wallTimer.unref();
  }

  /** Whether the program has its host (it may still be starting, or never have got one). */
  get hasHost(): boolean {
    return this.#link !== undefined;
  }

  /**
   * Sends the program to its host once the host is ready, then follows the host's frames and its
   * fate. A program that ended first leaves the host to `finish()`; one whose host could not be
   * started ends with that error.
   */
  start(source: string): void {
    this.#host.then(
      (link) => {
        if (this.final) return; // finish() releases it
        this.#link = link;
        link.onFrame((frame, bytes) => this.#receive(frame, bytes));
        // `lost` never rejects, and finish() never throws.
        void link.lost.then((reason) => {
          this.finish({
            status: 'error',
            error: `${reason} The program did not finish; the next exec starts in a fresh host.`,
          });
        });
        link.send({ type: 'execute', programId: this.id, source });
      },
      (error: unknown) => {
        if (this.final) return;
        this.hostFailure = error;
        this.finish({ status: 'error', error: errorMessage(error) });
      },
    );
  }

  /**
   * Records the final state once, ends the program's calls and releases its host, or, for a
   * reusable host whose program completed, hands the host on to serve the next program.
   */
  finish(final: ProgramFinalState): void {
    if (this.final) return;
    this.final = final;
    clearTimeout(this.#wallTimer);
    this.#results = [];
    try {
      this.calls.end();
      const link = this.#link;
      if (link === undefined) {
        // Ended before its host was ready: the host is no longer wanted, whether it comes up or not.
        this.#abandonHost();
        this.cleanup = this.#host.then(
          (started) => started.close(),
          () => {},
        );
        this.cleanup.catch(() => {}); // reported by the session's close()
      } else if (final.status === 'completed' && link.nextProgram) {
        // Only a completed program leaves its host in service: an error, a stop, a limit or a
        // lost host retires it, so nothing a failing program did reaches the next one.
        this.isHostReused = true;
        this.#onHostReusable(link.nextProgram());
        this.cleanup = Promise.resolve();
      } else {
        link.terminate();
        // The result goes back to the caller first; releasing the host (reaping it, proving it
        // gone) waits one turn of the event loop, so it never sits between a program and its result.
        this.cleanup = new Promise<void>((resolve) => setImmediate(resolve)).then(() => link.close());
        this.cleanup.catch(() => {}); // reported by the session's close()
      }
    } catch (error) {
      // Never thrown to whoever ended the program (a frame, a timer): the session's close() reports it.
      this.cleanup = Promise.reject(error);
      this.cleanup.catch(() => {});
    } finally {
      this.#markFinished();
    }
  }

  #receive(frame: HostFrame, bytes: number): void {
    // Once the program has ended its host is being stopped; what it still sends is dropped.
    if (this.final) return;
    if (frame.type === 'hello' || frame.type === 'ready') {
      this.#breakProtocol(`it sent a '${frame.type}' frame while running a program.`);
      return;
    }
    if (frame.programId !== this.id) {
      this.#breakProtocol(
        `it sent a '${frame.type}' frame for another program (${formatUntrusted(frame.programId)}) while running '${this.id}'.`,
      );
      return;
    }
    switch (frame.type) {
      case 'output':
        this.output.append(frame.text, frame.skippedBytes);
        return;
      case 'tool_calls':
        this.#acceptCalls(frame.calls, bytes);
        return;
      case 'done': {
        const ended =
          frame.status === 'completed'
            ? { status: 'completed' as const, ...(frame.value !== undefined ? { value: frame.value } : {}) }
            : { status: 'error' as const, ...(frame.error !== undefined ? { error: frame.error } : {}) };
        this.finish(limitProgramCompletion(ended, this.#limits.outputBytes));
        return;
      }
    }
  }

  #breakProtocol(what: string): void {
    this.finish({
      status: 'error',
      error: `The engine host broke the protocol: ${what} The program did not finish; the next exec starts in a fresh host.`,
    });
  }

  /** Checks a frame of calls as a whole, then runs each: a frame that breaks a rule runs none. */
  #acceptCalls(calls: readonly GuestToolCall[], bytes: number): void {
    if (calls.length === 0) return;
    const { toolCalls } = this.#limits;
    const left = toolCalls - this.#callIds.size;
    if (calls.length > left) {
      this.#breakProtocol(
        `it sent ${calls.length} tool calls when the program had ${left} left of its ${toolCalls} (limits.toolCalls); a host refuses the calls past the limit itself.`,
      );
      return;
    }
    const fresh = new Set<string>();
    for (const { callId } of calls) {
      if (this.#callIds.has(callId) || fresh.has(callId)) {
        this.#breakProtocol(`it sent the call id ${JSON.stringify(callId)} twice; every call has its own.`);
        return;
      }
      fresh.add(callId);
    }
    if (this.#heldCallBytes + bytes > heldCallBytesLimit) {
      this.#breakProtocol(
        `it sent tool calls faster than they ran: ${formatBytes(this.#heldCallBytes + bytes)} bytes of calls waiting, more than the ${formatBytes(heldCallBytesLimit)} the parent holds for a program.`,
      );
      return;
    }
    for (const callId of fresh) this.#callIds.add(callId);
    this.#heldCallBytes += bytes;
    const share = bytes / calls.length;
    for (const call of calls) void this.#runCall(call, share);
  }

  /** Runs one call and queues its answer. Never rejects. */
  async #runCall(call: GuestToolCall, share: number): Promise<void> {
    let answer: MeasuredToolCallResult;
    try {
      answer = await this.calls.call(call);
    } catch (error) {
      answer = failure(call.callId, `The tool call failed in the parent: ${errorMessage(error)}`);
    } finally {
      this.#heldCallBytes -= share;
    }
    try {
      this.#queueAnswer(answer);
    } catch (error) {
      this.finish({
        status: 'error',
        error: `The parent could not answer a tool call: ${errorMessage(error)}`,
      });
    }
  }

  /**
   * Adds an answer to the next `tool_results` frame, which goes once the current turn's answers
   * are in (one frame for a burst of calls), or at once when the answer would not fit in it.
   */
  #queueAnswer(answer: MeasuredToolCallResult): void {
    if (this.final) return;
    const room = maxFrameBytes - this.#resultsFrameBytes;
    // A comma between answers: one more byte each.
    let queued = answer;
    if (queued.bytes + 1 > room) {
      queued = failure(
        answer.result.callId,
        `The answer to this call is ${formatBytes(answer.bytes)} bytes of JSON, more than one protocol frame carries.`,
      );
    }
    if (this.#resultsBytes + queued.bytes + 1 > room) this.#sendResults();
    this.#results.push(queued.result);
    this.#resultsBytes += queued.bytes + 1;
    if (this.#isFlushQueued) return;
    this.#isFlushQueued = true;
    queueMicrotask(() => {
      this.#isFlushQueued = false;
      try {
        this.#sendResults();
      } catch (error) {
        this.finish({
          status: 'error',
          error: `The parent could not answer a tool call: ${errorMessage(error)}`,
        });
      }
    });
  }

  #sendResults(): void {
    const results = this.#results;
    this.#results = [];
    this.#resultsBytes = 0;
    if (results.length === 0 || this.final) return;
    // The link never throws: a frame it cannot deliver loses the host, which ends the program.
    this.#link?.send({ type: 'tool_results', programId: this.id, results });
  }
}
