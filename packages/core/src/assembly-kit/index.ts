/**
 * For packages that define assemblies of agents (a Workflow, a Swarm, a Graph, as
 * `@ghost/assemblies` does): {@link createAssemblyRun} makes the core `Run` whose entrypoint is
 * the assembly, and lets its steps run agents nested in it.
 *
 * @example
 * ```ts
 * import { createAssemblyRun } from '@ghost/core/assembly';
 * ```
 *
 * @packageDocumentation
 */

export type { RunStep } from '../run.js';
export type { AssemblyStepEventData } from '../stream-event.js';
export {
  type AssemblyAgentOptions,
  type AssemblyAgentResult,
  type AssemblyAskOptions,
  type AssemblyEventType,
  type AssemblyExecution,
  type AssemblyPerformed,
  type AssemblyRunInit,
  createAssemblyRun,
} from './assembly-run.js';
