import type { Piscina } from 'piscina';
import type { ThreadTaskResult } from '../host/thread-task.js';
import { errorMessage } from '../shared/error-message.js';
import type { GuestToolEntry, HostLimits, ParentFrame } from '../shared/protocol.js';
import type { HostLink } from './host-link.js';
import { HostLinkState } from './host-link.js';

/** What a thread host is set up with. */
export interface ThreadHostOptions {
  /** The session's worker pool; its workers run the engine's thread task. */
  readonly pool: Piscina;
  readonly tools: readonly GuestToolEntry[];
  readonly limits: HostLimits;
  /** How long the thread may take to say `ready`; past it, it is lost. Default 30 s. */
  readonly startTimeoutMs?: number;
}

/** How long a stopped program may take to notice its stop flag before its worker is terminated. */
const stopGraceMs = 1_000;

/** How long a finished task's last frames may take to arrive after its result. */
const drainTimeoutMs = 1_000;

/** Waits for `promise`, or `milliseconds`, whichever is first; never rejects. */
function settledWithin(promise: Promise<void>, milliseconds: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, milliseconds);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Runs one program in a worker thread of the session's pool (`placement: 'thread'`): frames go
 * over a message port, stopping sets a flag in shared memory that the engine's interrupt handler
 * reads, and a program that does not stop in time costs its worker, never the parent.
 */
export function launchThreadHost(options: ThreadHostOptions): HostLink {
  const state = new HostLinkState(
    { type: 'setup', tools: options.tools, limits: options.limits },
    options.startTimeoutMs,
  );
  // Node's global MessageChannel is worker_threads' own: importing that module for it would load
  // and compile it in every application at import, for a placement few choose.
  const { port1, port2 } = new MessageChannel();
  const stopFlag = new SharedArrayBuffer(4);
  const abort = new AbortController();
  let graceTimer: ReturnType<typeof setTimeout> | undefined;
  let framesReceived = 0;
  let framesExpected = Number.POSITIVE_INFINITY;
  let markDrained: () => void = () => {};
  const drained = new Promise<void>((resolve) => {
    markDrained = resolve;
  });
  const send = (frame: ParentFrame) => {
    if (state.isLost) return;
    try {
      port1.postMessage(frame);
    } catch (error) {
      state.lose(
        `The parent could not send the engine thread a '${frame.type}' frame: ${errorMessage(error)}`,
      );
    }
  };
  // Frames are structured clones, not bytes: they are checked like a process's, with no size.
  port1.on('message', (frame: unknown) => {
    framesReceived += 1;
    state.receive(frame, 0, send);
    if (framesReceived >= framesExpected) markDrained();
  });
  let running: Promise<ThreadTaskResult>;
  try {
    running = options.pool.run({ port: port2, stopFlag }, { transferList: [port2], signal: abort.signal });
  } catch (error) {
    running = Promise.reject(error); // a pool that throws instead of rejecting (destroyed)
  }
  // The task's end and its last frames travel separately: wait for every frame it sent first,
  // for a bounded time, since the count comes from the thread. Never rejects.
  const finished = running.then(
    async (result: ThreadTaskResult | undefined) => {
      const sent = result?.framesSent;
      framesExpected = typeof sent === 'number' ? sent : 0;
      if (framesReceived >= framesExpected) markDrained();
      await settledWithin(drained, drainTimeoutMs);
      state.lose('The engine thread ended.');
    },
    (error: unknown) => state.lose(`The engine thread ended unexpectedly: ${errorMessage(error)}`),
  );
  finished.then(() => {
    clearTimeout(graceTimer);
    port1.close();
  });
  const terminate = () => {
    Atomics.store(new Int32Array(stopFlag), 0, 1);
    graceTimer ??= setTimeout(() => abort.abort(new Error('The program did not stop in time.')), stopGraceMs);
  };
  return {
    ready: state.ready,
    lost: state.lost,
    send,
    onFrame: (listener) => state.onFrame(listener),
    terminate,
    async close() {
      terminate();
      await finished;
    },
  };
}
