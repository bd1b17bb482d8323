import { MessageChannel } from 'node:worker_threads';
import type { Piscina } from 'piscina';
import type { ThreadTaskResult } from './host/thread-task.js';
import type { HostLink } from './host-link.js';
import { HostLinkState } from './host-link.js';
import type { GuestToolEntry, HostLimits } from './protocol.js';

/** What a thread host is set up with. */
export interface ThreadHostOptions {
  /** The session's worker pool; its workers run the engine's thread task. */
  readonly pool: Piscina;
  readonly tools: readonly GuestToolEntry[];
  readonly limits: HostLimits;
}

/** How long a stopped program may take to notice its stop flag before its worker is terminated. */
const stopGraceMs = 1_000;

/**
 * Runs one program in a worker thread of the session's pool (`placement: 'thread'`): frames go
 * over a message port, stopping sets a flag in shared memory that the engine's interrupt handler
 * reads, and a program that does not stop in time costs its worker, never the parent.
 */
export function launchThreadHost(options: ThreadHostOptions): HostLink {
  const state = new HostLinkState({ type: 'setup', tools: options.tools, limits: options.limits });
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
  port1.on('message', (frame: unknown) => {
    framesReceived += 1;
    state.receive(frame, (setup) => port1.postMessage(setup));
    if (framesReceived >= framesExpected) markDrained();
  });
  const running = options.pool.run(
    { port: port2, stopFlag },
    { transferList: [port2], signal: abort.signal },
  );
  // The task's end and its last frames travel separately: wait for every frame it sent first.
  const finished = running.then(
    async (result: ThreadTaskResult) => {
      framesExpected = result.framesSent;
      if (framesReceived >= framesExpected) markDrained();
      await drained;
      state.lose('The engine thread ended.');
    },
    (error: unknown) => state.lose(`The engine thread ended unexpectedly: ${(error as Error).message}`),
  );
  void finished.then(() => {
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
    send: (frame) => {
      if (!state.isLost) port1.postMessage(frame);
    },
    onFrame: (listener) => state.onFrame(listener),
    terminate,
    async close() {
      terminate();
      await finished;
    },
  };
}
