/**
 * The attribute names this package writes: the OpenTelemetry GenAI semantic conventions
 * (status: development) where they have a name for the fact, `ghost.*` where they do not. Kept in
 * one place so a rename in the conventions is a one-line change. `docs/decisions/` records the
 * mapping from Ghost's events to spans.
 */
export const genAIAttributes = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  agentName: 'gen_ai.agent.name',
  conversationId: 'gen_ai.conversation.id',
  requestModel: 'gen_ai.request.model',
  requestStream: 'gen_ai.request.stream',
  requestTemperature: 'gen_ai.request.temperature',
  requestTopP: 'gen_ai.request.top_p',
  requestMaxTokens: 'gen_ai.request.max_tokens',
  requestStopSequences: 'gen_ai.request.stop_sequences',
  requestSeed: 'gen_ai.request.seed',
  outputType: 'gen_ai.output.type',
  responseId: 'gen_ai.response.id',
  responseModel: 'gen_ai.response.model',
  responseFinishReasons: 'gen_ai.response.finish_reasons',
  responseTimeToFirstChunk: 'gen_ai.response.time_to_first_chunk',
  usageInputTokens: 'gen_ai.usage.input_tokens',
  usageOutputTokens: 'gen_ai.usage.output_tokens',
  usageCacheReadInputTokens: 'gen_ai.usage.cache_read.input_tokens',
  usageCacheCreationInputTokens: 'gen_ai.usage.cache_creation.input_tokens',
  usageReasoningOutputTokens: 'gen_ai.usage.reasoning.output_tokens',
  toolName: 'gen_ai.tool.name',
  toolType: 'gen_ai.tool.type',
  toolCallId: 'gen_ai.tool.call.id',
  toolCallArguments: 'gen_ai.tool.call.arguments',
  toolCallResult: 'gen_ai.tool.call.result',
  toolDefinitions: 'gen_ai.tool.definitions',
  systemInstructions: 'gen_ai.system_instructions',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  errorType: 'error.type',
  errorMessage: 'error.message',
} as const;

/** Ghost's own attributes, for what the conventions have no name for. */
export const ghostAttributes = {
  runId: 'ghost.run.id',
  runOutcome: 'ghost.run.outcome',
  codeModeEngine: 'ghost.code_mode.engine',
  codeModeSandbox: 'ghost.code_mode.sandbox',
  programSource: 'ghost.code_mode.program.source',
  programStatus: 'ghost.code_mode.program.status',
  retryAttempt: 'ghost.model.retry.attempt',
  retryDelayMs: 'ghost.model.retry.delay_ms',
  assemblyName: 'ghost.assembly.name',
  assemblyStep: 'ghost.assembly.step',
  assemblyStepId: 'ghost.assembly.step.id',
  assemblyStepAttempt: 'ghost.assembly.step.attempt',
  approvalId: 'ghost.approval.id',
  approvalDecision: 'ghost.approval.decision',
  approvalIds: 'ghost.approval.ids',
  pauseId: 'ghost.pause.id',
  resumedFromRunId: 'ghost.run.resumed_from',
  firstRunId: 'ghost.run.first_id',
} as const;

/** The span events of a tool call that waits for a person's decision, and of the decision. */
export const approvalRequestedEventName = 'ghost.approval.requested';
export const approvalResolvedEventName = 'ghost.approval.resolved';
/** The span event of a call whose run suspended to wait for its decision (`approvals: 'suspend'`). */
export const approvalSuspendedEventName = 'ghost.approval.suspended';

/**
 * The span events of a run that suspended for approvals (`approvals: 'suspend'`) and of the run
 * that resumed it; the resumed run's span names the paused run in `ghost.run.resumed_from`.
 */
export const runSuspendedEventName = 'ghost.run.suspended';
export const runResumedEventName = 'ghost.run.resumed';

/** The span event a provider's retry of a model request becomes. */
export const modelRetryEventName = 'ghost.model.retry';
