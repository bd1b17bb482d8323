import type { MessagePort } from 'node:worker_threads';
import { protocolVersion } from '../shared/protocol.js';
import type { EngineDriver } from './engine-driver.js';
import { rehearseProgram } from './host-rehearsal.js';
import { type HostTransport, serveProgram } from './host-runtime.js';

/** What the parent hands a worker thread for one program. */
export interface ThreadTask {
  /** The protocol channel: frames as structured-cloned JSON values. */
  readonly port: MessagePort;
  /** Set to 1 by the parent to stop the program; read by the engine's interrupt handler. */
  readonly stopFlag: SharedArrayBuffer;
}

/** What a finished thread task tells the parent: how many frames it sent, so none is missed. */
export interface ThreadTaskResult {
  readonly framesSent: number;
}

function portTransport(port: MessagePort): HostTransport & { readonly framesSent: number } {
  let framesSent = 0;
  return {
    get framesSent() {
      return framesSent;
    },
    send: (frame) => {
      framesSent += 1;
      port.postMessage(frame);
    },
    onFrame: (listener) => {
      port.on('message', listener);
    },
  };
}

/**
 * Makes the task function of an engine's worker file for the `thread` placement (piscina): each
 * task serves one program over its message port, in a fresh guest of the worker's driver.
 *
 * @example
 * ```ts
 * // thread-worker.ts of an engine package
 * import { createThreadTask } from '@ghost/code-mode/host';
 * export default createThreadTask(createMyDriver());
 * ```
 */
export function createThreadTask(driver: EngineDriver): (task: ThreadTask) => Promise<ThreadTaskResult> {
  // Once per worker, before its first task: see rehearseProgram.
  const rehearsed = rehearseProgram(driver);
  rehearsed.catch(() => {}); // each task awaits it, and fails with its error
  return async ({ port, stopFlag }) => {
    await rehearsed;
    const flag = new Int32Array(stopFlag);
    const transport = portTransport(port);
    const served = serveProgram(driver, transport, () => Atomics.load(flag, 0) === 1);
    transport.send({ type: 'hello', protocol: protocolVersion, engine: driver.engine });
    try {
      await served;
    } finally {
      port.close();
    }
    return { framesSent: transport.framesSent };
  };
}
