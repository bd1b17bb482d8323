/**
 * Test helpers for Ghost applications: models that answer from a script or from your own function.
 *
 * @packageDocumentation
 */
export { MockModel, type MockModelStream } from './mock-model.js';
export { countOpenHandles, newOpenHandles } from './open-handles.js';
export {
  ScriptedModel,
  ScriptedModelError,
  type ScriptedStep,
  type ScriptedToolCall,
} from './scripted-model.js';
