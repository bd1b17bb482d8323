import type { ErrorSummary, StreamEvent, StreamEventDataMap, Usage } from '@ghost/core';
import type {
  RunTelemetry,
  TelemetryEventDetail,
  TelemetryRunStart,
  TelemetryScope,
} from '@ghost/core/plugin';
import type { ModelRequest } from '@ghost/core/provider';
import {
  type Attributes,
  type Context,
  context,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { errorType } from './error-type.js';
import {
  approvalRequestedEventName,
  approvalResolvedEventName,
  approvalSuspendedEventName,
  genAIAttributes,
  ghostAttributes,
  modelRetryEventName,
  runResumedEventName,
  runSuspendedEventName,
} from './gen-ai-attributes.js';
import {
  genAIFinishReason,
  genAIInputMessages,
  genAIOutputMessage,
  genAISystemInstructions,
  genAIToolDefinitions,
  jsonAttribute,
  type TurnToolCall,
} from './gen-ai-messages.js';
import { genAIProviderName } from './gen-ai-provider-name.js';
import { pausedSpanContext, resumedFromLink } from './paused-span-link.js';

/** The chat span of the model turn that is streaming, and what its events have told so far. */
interface ModelTurnSpan {
  readonly turn: number;
  readonly span: Span;
  /** `performance.now()` at `model_start`, for the time to the first chunk. */
  readonly startedAt: number;
  hasFirstChunk: boolean;
  usage: Usage | undefined;
  /** Only gathered when content is captured. */
  reasoning: string;
  readonly toolCalls: TurnToolCall[];
}

/** The span of a tool call that has started and not stopped. */
interface ToolCallSpan {
  readonly span: Span;
  /** Code mode's `exec`, `wait` or `stop`. */
  readonly isControl: boolean;
}

/**
 * A program's calls name the control call that is watching it, or the last one that did: when a
 * program keeps working after its `exec` returned, its calls name that ended `exec` until a
 * `wait` takes over. So the span contexts of ended control calls are kept while their program
 * runs, the most recent few only.
 */
const rememberedControlCalls = 16;

/** How the spans of work a run's end cut short are marked, when the run itself did not fail. */
const runEndedError: ErrorSummary = {
  name: 'RunEnded',
  code: 'RUN_ENDED',
  message: 'The run ended before this work finished.',
};

type EventData<Type extends keyof StreamEventDataMap> = StreamEventDataMap[Type];

/**
 * One run traced as OpenTelemetry spans: `invoke_agent` for the run, `chat` for each model turn,
 * `execute_tool` for each tool call (code mode's program calls beneath the `exec` or `wait` that
 * ran them). Maps every span it holds by what can still end it, and forgets it once ended; the
 * run's terminal event ends whatever is still open. An agent nested in the run is traced by a
 * tracer of its own, whose `invoke_agent` span starts under the tool call that runs it and ends
 * with the agent's `invocation_stop` or `invocation_error`.
 */
export class RunTracer implements RunTelemetry {
  readonly #tracer: Tracer;
  readonly #captureContent: boolean;
  readonly #agentSpan: Span;
  readonly #conversationId: string | undefined;
  #hasModel = false;
  #modelTurn: ModelTurnSpan | undefined;
  readonly #toolCalls = new Map<string, ToolCallSpan>();
  /** The open attempt of each assembly step, by its step id. */
  readonly #steps = new Map<string, Span>();
  /** Every span not yet ended, in start order; a repeated tool call id cannot hide one from the end. */
  readonly #openSpans = new Set<Span>();
  readonly #endedControlCalls = new Map<string, SpanContext>();
  #program: { readonly engine: string; readonly sandbox: string } | undefined;
  #isEnded = false;
  /** An agent nested in a run ends with its invocation, not with the run's terminal event. */
  readonly #isNested: boolean;
  /** A nested agent's usage, summed from its turns (its end event carries none). */
  #nestedUsage: Usage | undefined;

  constructor(tracer: Tracer, start: TelemetryRunStart, captureContent: boolean) {
    this.#tracer = tracer;
    this.#captureContent = captureContent;
    this.#isNested = start.source !== undefined;
    // A run that continues a session names it; metadata.conversationId is for runs without one.
    const conversationId = start.invocation.sessionId ?? start.invocation.metadata.conversationId;
    this.#conversationId =
      typeof conversationId === 'string' && conversationId !== '' ? conversationId : undefined;
    // The parent is whatever is current where the run starts: a nested agent (`agent.asTool()`,
    // or a run started inside a tool) starts inside the tool's scope, so it nests beneath that
    // tool's span.
    this.#agentSpan = this.#startSpan(
      `invoke_agent ${start.agentName}`,
      SpanKind.INTERNAL,
      {
        [genAIAttributes.operationName]: 'invoke_agent',
        [genAIAttributes.agentName]: start.agentName,
        [ghostAttributes.runId]: start.runId,
        ...this.#conversationAttributes(),
      },
      context.active(),
    );
  }

  onEvent(event: StreamEvent, detail: TelemetryEventDetail): void {
    if (this.#isEnded) return;
    switch (event.type) {
      case 'model_start':
        this.#startModelTurn(event.data, detail.request);
        break;
      case 'model_retry':
        this.#noteModelRetry(event.data);
        break;
      case 'text_delta':
      case 'tool_call_start':
        this.#noteChunk();
        break;
      case 'reasoning_delta':
        this.#noteChunk();
        if (this.#captureContent && this.#modelTurn) this.#modelTurn.reasoning += event.data.text;
        break;
      case 'tool_call_stop':
        this.#noteModelToolCall(event.data);
        break;
      case 'usage':
        this.#addUsage(event.data.usage);
        break;
      case 'model_stop':
        this.#stopModelTurn(event.data);
        break;
      case 'tool_start':
        this.#startToolCall(event.data, detail.hidden === true);
        break;
      case 'program_start':
        this.#startProgram(event.data);
        break;
      case 'program_stop':
        this.#stopProgram(event.data);
        break;
      case 'tool_stop':
        this.#stopToolCall(event.data);
        break;
      case 'approval_requested':
        this.#noteApproval(event.data.toolCallId, approvalRequestedEventName, {
          [ghostAttributes.approvalId]: event.data.approvalId,
        });
        break;
      case 'approval_resolved':
        this.#noteApproval(event.data.toolCallId, approvalResolvedEventName, {
          [ghostAttributes.approvalId]: event.data.approvalId,
          [ghostAttributes.approvalDecision]: event.data.decision,
        });
        break;
      case 'assembly_step_start':
        this.#startStep(event.data);
        break;
      case 'assembly_step_stop':
      case 'assembly_step_error':
        this.#stopStep(event.data.stepId, 'error' in event.data ? event.data.error : undefined);
        break;
      case 'invocation_stop':
        if (this.#isNested) this.#endRun('completed', undefined, this.#nestedUsage);
        break;
      case 'invocation_error':
        if (this.#isNested) this.#endRun(event.data.outcome, event.data.error, this.#nestedUsage);
        break;
      case 'run_stop':
        this.#endRun('completed', undefined, event.data.usage);
        break;
      case 'run_error':
      case 'run_partial':
      case 'run_cancel':
        this.#endRun(event.data.outcome, event.data.error, event.data.usage);
        break;
      case 'run_suspend':
        this.#suspendRun(event.data);
        break;
      case 'run_resume':
        this.#noteResume(event.data, detail.pausedContext);
        break;
      default:
        break;
    }
  }

  /** Kept with a suspended run's pause: the run span, which the resumed run's span links to. */
  pauseContext(): Record<string, string> | undefined {
    return this.#isNested ? undefined : pausedSpanContext(this.#agentSpan.spanContext());
  }

  runInScope<Result>(scope: TelemetryScope, work: () => Result): Result {
    const span = this.#isEnded ? undefined : this.#scopeSpan(scope);
    if (span === undefined) return work();
    return context.with(trace.setSpan(context.active(), span), work);
  }

  #scopeSpan(scope: TelemetryScope): Span | undefined {
    switch (scope.kind) {
      case 'run':
        return this.#agentSpan;
      case 'model':
        return this.#modelTurn?.turn === scope.turn ? this.#modelTurn.span : undefined;
      case 'tool':
        return this.#toolCalls.get(scope.toolCallId)?.span;
      case 'step':
        return this.#steps.get(scope.stepId);
    }
  }

  #startModelTurn(data: EventData<'model_start'>, request: ModelRequest | undefined): void {
    if (this.#modelTurn) this.#endSpan(this.#modelTurn.span); // a turn that never stopped: not expected
    const providerName = genAIProviderName(data.provider);
    if (!this.#hasModel) {
      // The agent's model is known once its first turn starts (a model id resolves lazily).
      this.#hasModel = true;
      this.#agentSpan.setAttributes({
        [genAIAttributes.providerName]: providerName,
        [genAIAttributes.requestModel]: data.modelId,
      });
    }
    const span = this.#startSpan(
      `chat ${data.modelId}`,
      SpanKind.CLIENT,
      {
        [genAIAttributes.operationName]: 'chat',
        [genAIAttributes.providerName]: providerName,
        [genAIAttributes.requestModel]: data.modelId,
        [genAIAttributes.requestStream]: true,
        ...this.#conversationAttributes(),
        ...(request ? requestAttributes(request) : {}),
        ...(request && this.#captureContent ? requestContentAttributes(request) : {}),
      },
      trace.setSpan(context.active(), this.#agentSpan),
    );
    this.#modelTurn = {
      turn: data.turn,
      span,
      startedAt: performance.now(),
      hasFirstChunk: false,
      usage: undefined,
      reasoning: '',
      toolCalls: [],
    };
  }

  #noteModelRetry(data: EventData<'model_retry'>): void {
    this.#modelTurn?.span.addEvent(modelRetryEventName, {
      [ghostAttributes.retryAttempt]: data.attempt,
      [ghostAttributes.retryDelayMs]: data.delayMs,
      [genAIAttributes.errorType]: errorType(data.error),
      [genAIAttributes.errorMessage]: data.error.message,
    });
  }

  /** A tool call the model asked for, kept for the turn's output messages when content is captured. */
  #noteModelToolCall(data: EventData<'tool_call_stop'>): void {
    if (this.#captureContent && this.#modelTurn) {
      const { toolCallId, toolName } = data;
      this.#modelTurn.toolCalls.push({ id: toolCallId, name: toolName, arguments: data.arguments });
    }
  }

  /** Adds `usage` to the streaming turn's, and to a nested agent's total. */
  #addUsage(usage: Usage): void {
    const turn = this.#modelTurn;
    if (turn) turn.usage = turn.usage === undefined ? usage : turn.usage.add(usage);
    if (this.#isNested) {
      this.#nestedUsage = this.#nestedUsage === undefined ? usage : this.#nestedUsage.add(usage);
    }
  }

  #noteChunk(): void {
    const turn = this.#modelTurn;
    if (turn === undefined || turn.hasFirstChunk) return;
    turn.hasFirstChunk = true;
    turn.span.setAttribute(
      genAIAttributes.responseTimeToFirstChunk,
      (performance.now() - turn.startedAt) / 1000,
    );
  }

  #stopModelTurn(data: EventData<'model_stop'>): void {
    const turn = this.#modelTurn;
    if (turn === undefined || turn.turn !== data.turn) return;
    this.#modelTurn = undefined;
    const finishReason = genAIFinishReason(data.finishReason, data.rawFinishReason);
    const { span } = turn;
    span.setAttributes({
      [genAIAttributes.responseFinishReasons]: [finishReason],
      ...(data.responseId !== undefined ? { [genAIAttributes.responseId]: data.responseId } : {}),
      ...(data.responseModelId !== undefined
        ? { [genAIAttributes.responseModel]: data.responseModelId }
        : {}),
      ...(turn.usage ? usageAttributes(turn.usage) : {}),
    });
    if (this.#captureContent) {
      const answer = { reasoning: turn.reasoning, text: data.text, toolCalls: turn.toolCalls, finishReason };
      span.setAttribute(genAIAttributes.outputMessages, jsonAttribute([genAIOutputMessage(answer)]));
    }
    this.#endSpan(span);
  }

  /**
   * A pause for a person's decision is a span event on the waiting call's span (the run's span
   * when the call is a nested agent's, whose tracer holds its spans).
   */
  #noteApproval(toolCallId: string, name: string, attributes: Attributes): void {
    (this.#toolCalls.get(toolCallId)?.span ?? this.#agentSpan).addEvent(name, attributes);
  }

  /**
   * An assembly's step (each attempt its own span) starts where its `assembly_step_start` is
   * emitted: beneath the run, or beneath the step that runs the nested assembly it belongs to.
   * Its agent starts inside the step's scope, so the agent's `invoke_agent` nests beneath it.
   */
  #startStep(data: EventData<'assembly_step_start'>): void {
    const current = context.active();
    const parent = trace.getSpan(current) === undefined ? trace.setSpan(current, this.#agentSpan) : current;
    const previous = this.#steps.get(data.stepId);
    if (previous) this.#endSpan(previous); // an attempt that never stopped: not expected
    const span = this.#startSpan(
      `assembly_step ${data.step}`,
      SpanKind.INTERNAL,
      {
        [ghostAttributes.assemblyName]: data.assemblyName,
        [ghostAttributes.assemblyStep]: data.step,
        [ghostAttributes.assemblyStepId]: data.stepId,
        [ghostAttributes.assemblyStepAttempt]: data.attempt,
        [genAIAttributes.agentName]: data.agentName,
      },
      parent,
    );
    this.#steps.set(data.stepId, span);
  }

  #stopStep(stepId: string, error: ErrorSummary | undefined): void {
    const span = this.#steps.get(stepId);
    if (span === undefined) return;
    this.#steps.delete(stepId);
    if (error !== undefined) markFailed(span, error);
    this.#endSpan(span);
  }

  #startToolCall(data: EventData<'tool_start'>, isControl: boolean): void {
    const program = isControl && data.toolName !== 'exec' ? this.#program : undefined;
    const span = this.#startSpan(
      `execute_tool ${data.toolName}`,
      SpanKind.INTERNAL,
      {
        [genAIAttributes.operationName]: 'execute_tool',
        [genAIAttributes.toolName]: data.toolName,
        [genAIAttributes.toolCallId]: data.toolCallId,
        [genAIAttributes.toolType]: 'function',
        ...(program ? programAttributes(program) : {}),
        ...(this.#captureContent ? { [genAIAttributes.toolCallArguments]: jsonAttribute(data.input) } : {}),
      },
      this.#toolParentContext(data.parentToolCallId),
    );
    this.#toolCalls.set(data.toolCallId, { span, isControl });
  }

  /**
   * A program's calls do not run inside the async context of the control call that watches them,
   * so their parent is set from the id they carry; a direct call's parent is the run.
   */
  #toolParentContext(parentToolCallId: string | undefined): Context {
    const current = context.active();
    if (parentToolCallId !== undefined) {
      const open = this.#toolCalls.get(parentToolCallId);
      if (open) return trace.setSpan(current, open.span);
      const ended = this.#endedControlCalls.get(parentToolCallId);
      if (ended) return trace.setSpanContext(current, ended);
    }
    return trace.setSpan(current, this.#agentSpan);
  }

  #stopToolCall(data: EventData<'tool_stop'>): void {
    const call = this.#toolCalls.get(data.toolCallId);
    if (call === undefined) return;
    this.#toolCalls.delete(data.toolCallId);
    const { span } = call;
    if (data.error?.code === 'APPROVAL_SUSPENDED') {
      // Not a failure: the run saved its pause, and the resumed run's own span runs the call.
      span.addEvent(approvalSuspendedEventName);
    } else if (data.status === 'error') {
      markFailed(span, data.error);
    } else if (this.#captureContent && data.value !== undefined) {
      span.setAttribute(genAIAttributes.toolCallResult, jsonAttribute(data.value));
    }
    this.#endSpan(span);
    if (call.isControl && this.#program !== undefined) this.#rememberControlCall(data.toolCallId, span);
  }

  #rememberControlCall(toolCallId: string, span: Span): void {
    this.#endedControlCalls.set(toolCallId, span.spanContext());
    for (const oldest of this.#endedControlCalls.keys()) {
      if (this.#endedControlCalls.size <= rememberedControlCalls) break;
      this.#endedControlCalls.delete(oldest);
    }
  }

  #startProgram(data: EventData<'program_start'>): void {
    const program = { engine: data.engine, sandbox: data.sandbox };
    this.#program = program;
    this.#endedControlCalls.clear(); // a new program: the last one's calls are all done
    const exec = this.#toolCalls.get(data.toolCallId);
    if (exec === undefined) return;
    exec.span.setAttributes(programAttributes(program));
    if (this.#captureContent) exec.span.setAttribute(ghostAttributes.programSource, data.source);
  }

  /** The program's end is reported by the control call watching it (the latest one open). */
  #stopProgram(data: EventData<'program_stop'>): void {
    this.#program = undefined;
    this.#endedControlCalls.clear();
    let watching: Span | undefined;
    for (const call of this.#toolCalls.values()) if (call.isControl) watching = call.span;
    const exec = this.#toolCalls.get(data.toolCallId)?.span;
    for (const span of new Set([watching, exec])) {
      if (span === undefined) continue;
      span.setAttribute(ghostAttributes.programStatus, data.status);
      if (data.status === 'error') {
        markFailed(span, {
          name: 'ProgramError',
          code: 'CODE_MODE_PROGRAM_FAILED',
          message: data.error ?? 'The program failed.',
        });
      }
    }
  }

  #suspendRun(data: EventData<'run_suspend'>): void {
    this.#agentSpan.addEvent(runSuspendedEventName, {
      [ghostAttributes.pauseId]: data.pauseId,
      [ghostAttributes.approvalIds]: data.pendingApprovals.map((pending) => pending.approvalId),
    });
    this.#endRun('suspended', undefined, data.usage);
  }

  /** Marks a run that resumes a paused one, linking its span to the paused run's. */
  #noteResume(data: EventData<'run_resume'>, pausedContext: TelemetryEventDetail['pausedContext']): void {
    const resumed = {
      [ghostAttributes.resumedFromRunId]: data.pausedRunId,
      [ghostAttributes.firstRunId]: data.firstRunId,
      [ghostAttributes.pauseId]: data.pauseId,
    };
    this.#agentSpan.setAttributes(resumed);
    const link = resumedFromLink(pausedContext);
    if (link !== undefined) this.#agentSpan.addLink(link);
    this.#agentSpan.addEvent(runResumedEventName, {
      ...resumed,
      [ghostAttributes.approvalIds]: [...data.decided],
    });
  }

  #endRun(outcome: string, error: ErrorSummary | undefined, usage: Usage | undefined): void {
    this.#isEnded = true;
    // Whatever is still open was cut short by the run's end: its children first, the run last.
    const cutShort = error ?? runEndedError;
    const open = [...this.#openSpans].reverse();
    for (const span of open) {
      if (span === this.#agentSpan) continue;
      markFailed(span, cutShort);
      this.#endSpan(span);
    }
    this.#modelTurn = undefined;
    this.#toolCalls.clear();
    this.#steps.clear();
    this.#endedControlCalls.clear();
    this.#program = undefined;
    const agentSpan = this.#agentSpan;
    agentSpan.setAttributes({
      [ghostAttributes.runOutcome]: outcome,
      ...(usage === undefined ? {} : usageAttributes(usage)),
    });
    if (error !== undefined) markFailed(agentSpan, error);
    this.#endSpan(agentSpan);
  }

  #conversationAttributes(): Attributes {
    const id = this.#conversationId;
    return id === undefined ? {} : { [genAIAttributes.conversationId]: id };
  }

  #startSpan(name: string, kind: SpanKind, attributes: Attributes, parent: Context): Span {
    const span = this.#tracer.startSpan(name, { kind, attributes }, parent);
    this.#openSpans.add(span);
    return span;
  }

  /** Ends a span once; an exporter that throws on end cannot keep the others open. */
  #endSpan(span: Span): void {
    if (!this.#openSpans.delete(span)) return;
    try {
      span.end();
    } catch {
      // Observation never changes the run.
    }
  }
}

function markFailed(span: Span, error: ErrorSummary | undefined): void {
  span.setAttribute(genAIAttributes.errorType, errorType(error));
  span.setStatus({
    code: SpanStatusCode.ERROR,
    ...(error !== undefined && error.message !== '' ? { message: error.message } : {}),
  });
}

function programAttributes(program: { readonly engine: string; readonly sandbox: string }): Attributes {
  return {
    [ghostAttributes.codeModeEngine]: program.engine,
    [ghostAttributes.codeModeSandbox]: program.sandbox,
  };
}

/** The counts the provider reported; one it did not report is left out, never 0. */
function usageAttributes(usage: Usage): Attributes {
  const attributes: Attributes = {};
  const counts = [
    [genAIAttributes.usageInputTokens, usage.inputTokens],
    [genAIAttributes.usageOutputTokens, usage.outputTokens],
    [genAIAttributes.usageCacheReadInputTokens, usage.cacheReadTokens],
    [genAIAttributes.usageCacheCreationInputTokens, usage.cacheWriteTokens],
    [genAIAttributes.usageReasoningOutputTokens, usage.reasoningTokens],
  ] as const;
  for (const [name, count] of counts) if (count !== undefined) attributes[name] = count;
  return attributes;
}

/** The request settings the conventions name, as the agent set them. */
function requestAttributes(request: ModelRequest): Attributes {
  const attributes: Attributes = {};
  const settings = request.settings ?? {};
  if (settings.temperature !== undefined)
    attributes[genAIAttributes.requestTemperature] = settings.temperature;
  if (settings.topP !== undefined) attributes[genAIAttributes.requestTopP] = settings.topP;
  if (settings.maxOutputTokens !== undefined)
    attributes[genAIAttributes.requestMaxTokens] = settings.maxOutputTokens;
  if (settings.stopSequences !== undefined)
    attributes[genAIAttributes.requestStopSequences] = [...settings.stopSequences];
  if (settings.seed !== undefined) attributes[genAIAttributes.requestSeed] = settings.seed;
  if (request.output !== undefined) attributes[genAIAttributes.outputType] = 'json';
  return attributes;
}

function requestContentAttributes(request: ModelRequest): Attributes {
  return {
    [genAIAttributes.systemInstructions]: jsonAttribute(genAISystemInstructions(request.instructions)),
    [genAIAttributes.inputMessages]: jsonAttribute(genAIInputMessages(request.messages)),
    [genAIAttributes.toolDefinitions]: jsonAttribute(genAIToolDefinitions(request.tools)),
  };
}
