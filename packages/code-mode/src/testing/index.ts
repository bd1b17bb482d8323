/**
 * Test helpers for code-mode engines: the conformance suite every engine runs, sessions opened
 * without an agent, and a forged host that plays a compromised engine host against the parent.
 *
 * @packageDocumentation
 */

export { leftoverEntries } from '../code-mode-session.js';
export { descendantProcesses } from './child-processes.js';
export { describeEngineConformance, type EngineConformanceOptions } from './engine-conformance.js';
export {
  type HostileHostOptions,
  type HostileStep,
  type HostileTemplate,
  hostileHandshake,
  hostileHostEngine,
} from './hostile-host.js';
