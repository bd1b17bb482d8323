/**
 * The host side of code mode, for engine authors: what runs inside the sandboxed host process
 * (or worker thread) around an engine. An engine's host script is one call to
 * {@link runProcessHost} with its {@link EngineDriver}; a driver runs each program with
 * {@link GuestTurnLoop}. The parent side of an engine is in `@ghost/code-mode/engine`. The
 * protocol between the parent and its hosts is private to code mode: to run a driver's programs
 * in a test, without a process, use `serveProgramInProcess` from `@ghost/code-mode/testing`.
 *
 * @example
 * ```ts
 * // host.ts of an engine package
 * import { runProcessHost } from '@ghost/code-mode/host';
 * import { myDriver } from './my-driver.js';
 * await runProcessHost(myDriver);
 * ```
 *
 * @packageDocumentation
 */

export type { HostLimits } from '../shared/protocol.js';
export {
  type EngineDriver,
  formatStall,
  type GuestSetup,
  type HostProgram,
  type PreparedGuest,
  type ProgramCompletion,
} from './engine-driver.js';
export type { GuestControl } from './guest-prelude.js';
export { GuestTurnLoop, type GuestTurns, hostThen } from './guest-turn-loop.js';
export { formatInterrupt, type InterruptReason } from './interrupt.js';
export { runProcessHost } from './process-host.js';
export { createThreadTask, type ThreadTask, type ThreadTaskResult } from './thread-task.js';
