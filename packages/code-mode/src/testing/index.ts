/**
 * Test helpers for code-mode engines: the conformance suite every engine runs, and sessions
 * opened without an agent.
 *
 * @packageDocumentation
 */

export { leftoverEntries } from '../code-mode-session.js';
export { descendantProcesses } from './child-processes.js';
export { describeEngineConformance, type EngineConformanceOptions } from './engine-conformance.js';
