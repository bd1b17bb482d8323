/**
 * Internals other Ghost packages build on: the tool-call pipeline itself, for code mode's test
 * sessions and for integrations that run tools outside an agent loop. Not a stable API; not
 * documented for applications.
 *
 * @internal
 * @packageDocumentation
 */

export { raceAbort } from './abort-race.js';
export {
  type EmitEvent,
  runToolCall,
  ToolCallBudget,
  type ToolCallEnvironment,
  type ToolCallRequest,
} from './tool-call-runner.js';
export { ToolLock } from './tool-lock.js';
export { type PluginOrigin, validatePlugin } from './validate-plugin.js';
