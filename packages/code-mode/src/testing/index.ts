/**
 * Test helpers for code-mode engines: the conformance suite every engine runs, the check of the
 * guest API manifest against the prelude in an engine's interpreter, sessions opened without an
 * agent, a driver's programs served in process with the parent's side played for it, and a forged
 * host that plays a compromised engine host against the parent.
 *
 * @packageDocumentation
 */

export { leftoverEntries } from '../open-code-mode-session.js';
export { descendantProcesses } from './child-processes.js';
export {
  describeGuestPreludeConformance,
  type GuestPreludeConformanceOptions,
  type GuestPreludeSources,
  type InstallGuestPrelude,
} from './describe-guest-prelude-conformance.js';
export { describeAgentCases } from './engine-conformance/agent-cases.js';
export { describeBadProgramCases } from './engine-conformance/bad-program-cases.js';
export {
  type ConformanceContext,
  type ConformanceSession,
  createConformanceContext,
  type EngineConformanceOptions,
} from './engine-conformance/conformance-context.js';
export { describeControlOperationCases } from './engine-conformance/control-operation-cases.js';
export {
  type DescribeEngineConformanceOptions,
  describeEngineConformance,
  type EngineConformanceGroup,
  engineConformanceGroups,
} from './engine-conformance/describe-engine-conformance.js';
export {
  type EngineConformanceCapability,
  engineConformanceCapabilities,
} from './engine-conformance/engine-conformance-capability.js';
export { describeGuestApiCases } from './engine-conformance/guest-api-cases.js';
export { describeHostCleanupCases } from './engine-conformance/host-cleanup-cases.js';
export { describeResultPlacementCases } from './engine-conformance/result-placement-cases.js';
export {
  type HostileHostOptions,
  type HostileStep,
  type HostileTemplate,
  hostileHandshake,
  hostileHostEngine,
} from './hostile-host.js';
export {
  type InProcessHostOptions,
  type InProcessProgramOptions,
  type InProcessProgramResult,
  type InProcessSessionOptions,
  type InProcessToolCall,
  serveProgramInProcess,
  serveSessionInProcess,
} from './serve-program-in-process.js';
