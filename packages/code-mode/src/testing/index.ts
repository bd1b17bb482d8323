/**
 * Test helpers for code-mode engines: the conformance suite every engine runs, and sessions
 * opened without an agent.
 *
 * @packageDocumentation
 */
export { descendantProcesses } from './child-processes.js';
export { describeEngineConformance, type EngineConformanceOptions } from './engine-conformance.js';
export {
  leftoverEntries,
  openTestSession,
  type TestSession,
  type TestSessionOptions,
} from './test-session.js';
