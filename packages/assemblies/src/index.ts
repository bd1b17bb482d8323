/**
 * Many agents, one Run: a {@link defineWorkflow | Workflow} (your code decides which agents run,
 * in what order), a {@link defineSwarm | Swarm} (its agents hand the conversation to one another)
 * or a {@link defineGraph | Graph} (nodes and edges decide: conditions, forks, joins, error
 * edges). Each is asked like an agent and returns the same core `Run`.
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
export { defineGraph, type Graph } from './graph.js';
export type {
  GraphDefinition,
  GraphEdge,
  GraphErrorEdge,
  GraphNodeOptions,
  GraphState,
} from './graph-definition.js';
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
