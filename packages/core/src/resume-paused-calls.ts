import { ConcurrencyLimit } from './concurrency-limit.js';
import { PausedRunError } from './errors.js';
import type { ModelMessage, ModelToolCall } from './model.js';
import type { PausedCall, PausedRun } from './paused-run.js';
import type { RunExecution } from './run.js';
import type { Tool } from './tool.js';
import { approvalRefusal } from './tool-approval.js';
import { runToolCall, type ToolCallEnvironment, toolResultMessage } from './tool-call-runner.js';

/** A person's answer to one approval, as `agent.resume({ decisions })` takes it. */
export type ResumeDecision = 'approve' | { readonly reject: string };

/** What a resumed run continues from: the pause it claimed and the decisions it was given. */
export interface ResumePlan {
  readonly paused: PausedRun;
  readonly decisions: ReadonlyMap<string, ResumeDecision>;
}

/**
 * The tool calls a resumed run has taken before it runs the approved ones, which take a call
 * again: each pending call took one when it paused.
 */
export function callsBeforeResume(plan: ResumePlan): number {
  const approved = plan.paused.calls.filter(
    (call) => call.status === 'pending' && plan.decisions.get(call.approvalId) === 'approve',
  ).length;
  return Math.max(0, plan.paused.toolCalls - approved);
}

/** What {@link continuePausedCalls} needs from the agent loop. */
export interface PausedCallsInput {
  readonly agentName: string;
  readonly plan: ResumePlan;
  /** The live conversation (history, then the paused turn); results are added to it. */
  readonly messages: ModelMessage[];
  readonly tools: ReadonlyMap<string, Tool>;
  readonly environment: ToolCallEnvironment;
  readonly maxParallel: number;
  readonly execution: RunExecution;
}

/**
 * Refuses, before anything runs, a resume whose agent cannot run the paused calls: a tool they
 * call is gone (renamed or removed since the pause).
 */
function checkToolsPresent(input: PausedCallsInput): void {
  const missing = [
    ...new Set(
      input.plan.paused.calls
        .filter((call) => call.status === 'pending' && !input.tools.has(call.toolName))
        .map((call) => `tool '${call.toolName}'`),
    ),
  ];
  if (missing.length === 0) return;
  throw new PausedRunError(
    `Agent '${input.agentName}' cannot resume its paused run: it no longer has ${missing.join(', ')}, which the paused calls need. Nothing ran. Restore the tool, or resume with an agent that has it.`,
    { code: 'PAUSED_RUN_INCOMPATIBLE', missing, ...sessionOf(input.execution) },
  );
}

function sessionOf(execution: RunExecution): { sessionId?: string } {
  const { sessionId } = execution.runContext.invocation;
  return sessionId === undefined ? {} : { sessionId };
}

function errorResult(call: PausedCall, content: string): ModelMessage {
  return { role: 'tool', toolCallId: call.toolCallId, toolName: call.toolName, content, isError: true };
}

/** Puts the results after the paused answer in the order of its calls, as providers expect them. */
function orderResults(messages: ModelMessage[]): void {
  const answerAt = messages.findLastIndex((message) => message.role === 'assistant');
  const answer = messages[answerAt];
  if (answer?.role !== 'assistant' || answer.toolCalls === undefined) return;
  const order = new Map(answer.toolCalls.map((call: ModelToolCall, index) => [call.id, index]));
  const results = messages.splice(answerAt + 1);
  const rank = (message: ModelMessage) =>
    message.role === 'tool' ? (order.get(message.toolCallId) ?? order.size) : order.size;
  messages.push(...results.sort((a, b) => rank(a) - rank(b)));
}

/**
 * Continues the calls a run paused on, at most once each: decides those `decisions` answer, saves
 * that claim (a call marked `started` is never started again), runs the approved ones, and adds
 * every result to `messages`. A call a crashed resume had started gets a result saying it may or
 * may not have taken effect. Returns the calls still waiting for a decision.
 */
export async function continuePausedCalls(input: PausedCallsInput): Promise<readonly PausedCall[]> {
  checkToolsPresent(input);
  const { plan, messages, execution } = input;
  const { paused, decisions } = plan;
  const toRun: PausedCall[] = [];
  const waiting: PausedCall[] = [];
  for (const call of paused.calls) {
    const decision = decisions.get(call.approvalId);
    if (call.status === 'started') {
      messages.push(
        errorResult(
          call,
          `The call to ${call.toolName} was approved and started, but the process running it stopped before it returned. It was not run again, so it may or may not have taken effect; check before retrying it.`,
        ),
      );
    } else if (decision === undefined) {
      waiting.push(call);
    } else if (decision === 'approve') {
      toRun.push({ ...call, status: 'started' });
    } else {
      const refusal = approvalRefusal(call.toolName, { decision: 'rejected', message: decision.reject }, 0);
      messages.push(errorResult(call, refusal.message));
    }
  }
  // The claim: saved before any tool runs, so a resume after a crash never starts these again.
  const progress = { turns: paused.turns, toolCalls: input.environment.budget.used };
  await execution.savePause({ ...progress, calls: [...toRun, ...waiting] });
  for (const call of paused.calls) {
    const decision = decisions.get(call.approvalId);
    if (decision === undefined || call.status !== 'pending') continue;
    const rejected = decision !== 'approve';
    execution.emit('approval_resolved', {
      approvalId: call.approvalId,
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      decision: rejected ? 'rejected' : 'approved',
      ...(rejected ? { message: decision.reject } : {}),
    });
  }
  const approved: ToolCallEnvironment = {
    ...input.environment,
    approvals: { timeoutMs: 0, request: async () => ({ decision: 'approved' }) },
  };
  const limit = new ConcurrencyLimit(input.maxParallel);
  const outcomes = await Promise.all(
    toRun.map((call) =>
      limit.run(() =>
        runToolCall({ toolCallId: call.toolCallId, toolName: call.toolName, input: call.input }, approved),
      ),
    ),
  );
  for (const outcome of outcomes) messages.push(toolResultMessage(outcome));
  orderResults(messages);
  if (waiting.length === 0 && toRun.length > 0) {
    await execution.savePause({ turns: paused.turns, toolCalls: input.environment.budget.used, calls: [] });
  }
  return waiting;
}
