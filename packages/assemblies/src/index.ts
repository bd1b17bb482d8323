/**
 * Many agents, one Run: a {@link defineWorkflow | Workflow} (your code decides which agents run,
 * in what order). It is asked like an agent and returns the same core `Run`.
 * A {@link defineSwarm | Swarm} lets its agents hand the conversation to one another.
 *
 * @packageDocumentation
 */

export type { Assembly, Runnable, StepResult } from './assembly.js';
export {
  type AssemblyErrorCode,
  AssemblyLimitError,
  AssemblyRoutingError,
  AssemblyStepTimeoutError,
} from './assembly-errors.js';
export {
  defineSwarm,
  type Swarm,
  type SwarmDefinition,
  type SwarmHandoffInput,
  type SwarmMemberOptions,
} from './swarm.js';
export {
  defineWorkflow,
  type InvokeOptions,
  type ParallelOptions,
  type ParallelTask,
  type Workflow,
  type WorkflowContext,
  type WorkflowDefinition,
} from './workflow.js';
