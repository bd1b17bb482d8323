/**
 * Ghost agents behind a web UI, over the AG-UI protocol: a run's stream as AG-UI events, an
 * AG-UI thread as a Ghost conversation, and an HTTP handler that serves an agent to AG-UI
 * clients (`HttpAgent` from `@ag-ui/client`, CopilotKit) as server-sent events.
 *
 * @packageDocumentation
 */
export { AgUiEventMapper, type AgUiEventMapperOptions, stepNameOf } from './ag-ui-event-mapper.js';
export {
  type AgUiActorRequest,
  type AgUiHandler,
  type AgUiHandlerOptions,
  type AgUiRunRequest,
  type AgUiServedAgent,
  agUiHandler,
} from './ag-ui-handler.js';
export {
  type AgUiErrorCode,
  AgUiRequestError,
  type AgUiRequestErrorInit,
  type AgUiRequestProblem,
} from './ag-ui-request-error.js';
export {
  type ConversationFromAgUiOptions,
  conversationFromAgUi,
  unansweredToolCallResult,
  withheldToolResult,
} from './conversation-from-ag-ui.js';
export type { GhostToolCallFields } from './ghost-fields.js';
export { toAgUiEvents } from './to-ag-ui-events.js';
