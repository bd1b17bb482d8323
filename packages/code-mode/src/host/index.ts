/**
 * The host side of code mode, for engine authors: what runs inside the sandboxed host process
 * (or worker thread) around an engine. An engine's host script is one call to
 * {@link runProcessHost} with its {@link EngineDriver}.
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

export { type DecodedFrame, FrameDecoder, FrameError } from '../shared/frame-codec.js';
export {
  type DoneFrame,
  type ExecuteFrame,
  type GuestToolCall,
  type GuestToolEntry,
  type HelloFrame,
  type HostFrame,
  type HostLimits,
  type HostReuse,
  type OutputFrame,
  type ParentFrame,
  protocolVersion,
  type ReadyFrame,
  type SetupFrame,
  type StopFrame,
  type ToolCallResult,
  type ToolCallsFrame,
  type ToolResultsFrame,
} from '../shared/protocol.js';
export {
  type EngineDriver,
  formatStall,
  type GuestSetup,
  type HostProgram,
  type PreparedGuest,
  type ProgramCompletion,
} from './engine-driver.js';
export { type GuestControl, guestPrelude, wrapProgram } from './guest-prelude.js';
export { GuestTurnLoop, type GuestTurns, hostThen } from './guest-turn-loop.js';
export { rehearseProgram } from './host-rehearsal.js';
export { type HostTransport, serveProgram } from './host-runtime.js';
export { formatInterrupt, type InterruptReason } from './interrupt.js';
export { createDescriptorTransport, runProcessHost } from './process-host.js';
export { createThreadTask, type ThreadTask, type ThreadTaskResult } from './thread-task.js';
