import { subscribeToAbort } from './call-cancellation.js';
import { ApprovalError } from './errors.js';
import { randomUUID } from './lazy-builtins.js';
import type { PausedCall } from './paused-run.js';
import type { RunExecution } from './run.js';
import type { RunContext } from './run-context.js';
import type { ApprovalDecision, ApprovalRequestedData, StreamEventDataMap } from './stream-event.js';
import type { Tool } from './tool.js';

/**
 * A tool call waiting for a person's decision, as `run.pendingApprovals` lists it (the same
 * fields as its `approval_requested` event).
 */
export type PendingApproval = ApprovalRequestedData;

/**
 * How one approval ended, as the call that waited for it reads it: a decision, or `suspended` when
 * the run saves its pause instead of waiting (the call continues in `agent.resume()`).
 */
export interface ApprovalAnswer {
  readonly decision: ApprovalDecision | 'suspended';
  /** With `rejected`: the person's message. */
  readonly message?: string;
}

/** The call an approval is asked for. */
export interface ApprovalCall {
  readonly toolCallId: string;
  readonly toolName: string;
  /** The validated input. */
  readonly input: unknown;
  /** Aborts the wait for this call alone (the program that made it ended). */
  readonly signal?: AbortSignal | undefined;
}

/**
 * Where a tool call that needs approval waits for it (`ToolCallEnvironment.approvals`): the run's
 * approvals, seen from one agent invocation. Without one, such a call is refused (fail closed).
 */
export interface ApprovalGate {
  /** How long a call waits before it is rejected as `timed_out`, in milliseconds. */
  readonly timeoutMs: number;
  /** Asks for a decision and waits for it; never rejects (cancellation is the `cancelled` decision). */
  request(call: ApprovalCall): Promise<ApprovalAnswer>;
}

type EmitApprovalEvent = <Type extends 'approval_requested' | 'approval_resolved'>(
  type: Type,
  data: StreamEventDataMap[Type],
) => void;

/** An answer the registry gives: a person's decision, the timeout or a cancellation. */
interface DecidedAnswer extends ApprovalAnswer {
  readonly decision: ApprovalDecision;
}

interface PendingEntry {
  readonly pending: PendingApproval;
  settle(answer: DecidedAnswer): void;
}

/** What {@link ApprovalRegistry.request} needs besides the call. */
interface ApprovalRequestInit extends ApprovalCall {
  readonly agentName: string;
  readonly path: readonly string[] | undefined;
  readonly timeoutMs: number;
  /** The invocation's signal: its cancellation or deadline ends the wait as `cancelled`. */
  readonly runSignal: AbortSignal;
}

/**
 * @internal The approvals of one run, shared by every agent invocation in it (the run's own and
 * those nested), so all of them surface on the run and are answered there.
 */
export class ApprovalRegistry {
  readonly #emit: EmitApprovalEvent;
  readonly #entries = new Map<string, PendingEntry>();
  #snapshot: readonly PendingApproval[] | undefined;

  constructor(emit: EmitApprovalEvent) {
    this.#emit = emit;
  }

  /** The approvals waiting now, oldest first; a frozen list. */
  get pending(): readonly PendingApproval[] {
    this.#snapshot ??= Object.freeze([...this.#entries.values()].map((entry) => entry.pending));
    return this.#snapshot;
  }

  /**
   * Emits `approval_requested` and waits for the decision: `run.approve` / `run.reject`, the
   * timeout (`timed_out`), or either signal (`cancelled`). Every path clears the timer and the
   * signal subscriptions, and emits `approval_resolved` once.
   */
  request(init: ApprovalRequestInit): Promise<ApprovalAnswer> {
    const approvalId = randomUUID();
    const { toolCallId, toolName } = init;
    const pending: PendingApproval = Object.freeze({
      approvalId,
      toolCallId,
      toolName,
      input: init.input,
      agentName: init.agentName,
      ...(init.path === undefined ? {} : { path: Object.freeze([...init.path]) }),
    });
    return new Promise<ApprovalAnswer>((resolve) => {
      const unsubscribes: (() => void)[] = [];
      let timer: ReturnType<typeof setTimeout> | undefined;
      const settle = (answer: DecidedAnswer) => {
        if (!this.#entries.delete(approvalId)) return;
        this.#snapshot = undefined;
        clearTimeout(timer);
        for (const unsubscribe of unsubscribes) unsubscribe();
        this.#emit('approval_resolved', {
          approvalId,
          toolCallId,
          toolName,
          decision: answer.decision,
          ...(answer.message === undefined ? {} : { message: answer.message }),
        });
        resolve(answer);
      };
      this.#entries.set(approvalId, { pending, settle });
      this.#snapshot = undefined;
      // The timer first: a listener may answer synchronously while the request is emitted.
      timer = setTimeout(() => settle({ decision: 'timed_out' }), init.timeoutMs);
      this.#emit('approval_requested', pending);
      if (!this.#entries.has(approvalId)) return;
      for (const signal of [init.runSignal, init.signal]) {
        if (signal !== undefined)
          unsubscribes.push(subscribeToAbort(signal, () => settle({ decision: 'cancelled' })));
      }
    });
  }

  /** Approves a pending call; throws `ApprovalError` (`APPROVAL_UNKNOWN`) when `approvalId` is not pending. */
  approve(approvalId: string): void {
    this.#entryOf(approvalId, 'approve').settle({ decision: 'approved' });
  }

  /** Rejects a pending call; throws `ApprovalError` (`APPROVAL_UNKNOWN`) when `approvalId` is not pending. */
  reject(approvalId: string, message: string | undefined): void {
    this.#entryOf(approvalId, 'reject').settle({
      decision: 'rejected',
      ...(message === undefined ? {} : { message }),
    });
  }

  /** Ends every wait as `cancelled` (the run ended). */
  cancelAll(): void {
    for (const entry of [...this.#entries.values()]) entry.settle({ decision: 'cancelled' });
  }

  #entryOf(approvalId: string, method: 'approve' | 'reject'): PendingEntry {
    const entry = typeof approvalId === 'string' ? this.#entries.get(approvalId) : undefined;
    if (entry === undefined) {
      throw new ApprovalError(
        `run.${method}(${JSON.stringify(approvalId)}): no approval with this id is pending. It was never requested in this run, was already answered, timed out, or its run ended; run.pendingApprovals lists the ids that wait.`,
        { code: 'APPROVAL_UNKNOWN', ...(typeof approvalId === 'string' ? { approvalId } : {}) },
      );
    }
    return entry;
  }
}

/** @internal The gate an agent invocation's tool calls (direct and brokered) wait at. */
export function approvalGateFor(execution: RunExecution, agentName: string, timeoutMs: number): ApprovalGate {
  const { host, source } = execution.placement;
  const runSignal = execution.runContext.signal;
  return {
    timeoutMs,
    request: (call) =>
      host.approvals.request({ ...call, agentName, path: source?.path, timeoutMs, runSignal }),
  };
}

/**
 * @internal The gate of a run that suspends (`approvals: 'suspend'`): it does not wait, it notes
 * the call for the run's pause (with a new approval id) and answers `suspended`. Only the run's own
 * agent's direct calls reach it: a program's calls and a nested agent's cannot be suspended across
 * processes, so they wait at the run's in-process gate.
 */
export class SuspendingApprovalGate implements ApprovalGate {
  readonly timeoutMs: number;
  #calls: PausedCall[] = [];

  constructor(timeoutMs: number) {
    this.timeoutMs = timeoutMs;
  }

  async request(call: ApprovalCall): Promise<ApprovalAnswer> {
    const { toolCallId, toolName, input } = call;
    this.#calls.push({ approvalId: randomUUID(), toolCallId, toolName, input, status: 'pending' });
    return { decision: 'suspended' };
  }

  /** The calls suspended since the last take, in the order they asked. */
  take(): readonly PausedCall[] {
    const taken = this.#calls;
    this.#calls = [];
    return taken;
  }
}

/**
 * Whether this call of `tool` needs a person's decision: its `needsApproval`, asked with the
 * validated input. Fails closed: a predicate that throws, rejects or returns anything but
 * `false` means it does.
 */
export async function callNeedsApproval(
  tool: Tool,
  input: unknown,
  toolCallId: string,
  run: RunContext,
): Promise<boolean> {
  const rule = tool.needsApproval;
  if (rule === undefined || rule === false) return false;
  if (rule === true) return true;
  try {
    const { invocation } = run;
    const answer = await rule(input, {
      toolName: tool.name,
      toolCallId,
      actorId: invocation.actorId,
      context: invocation.context,
      run,
    });
    return answer !== false;
  } catch {
    return true;
  }
}

/** The error a rejected or timed-out call ends with (any decision but `rejected` reads as timed out); its message is what the model reads. */
export function approvalRefusal(toolName: string, answer: ApprovalAnswer, timeoutMs: number): ApprovalError {
  switch (answer.decision) {
    case 'rejected': {
      const message = answer.message?.trim() ?? '';
      const why = message === '' ? '.' : `: ${message}${/[.!?]$/.test(message) ? '' : '.'}`;
      return new ApprovalError(
        `The call to ${toolName} was rejected by a person${why} It did not run. Do not retry it unless asked.`,
        { code: 'APPROVAL_REJECTED' },
      );
    }
    default:
      return new ApprovalError(
        `No one approved the call to ${toolName} within ${formatSeconds(timeoutMs)}, so it did not run. Do not retry it unless asked.`,
        { code: 'APPROVAL_TIMED_OUT' },
      );
  }
}

function formatSeconds(ms: number): string {
  const seconds = Number((ms / 1000).toFixed(3));
  return seconds === 1 ? '1 second' : `${seconds} seconds`;
}

/**
 * The approvals a person is asked for, for calls of a paused run's answer: what a suspended run
 * lists as `run.pendingApprovals` and `runtime.readSession()` reads back from the session.
 */
export function approvalsOf(calls: readonly PausedCall[], agentName: string): readonly PendingApproval[] {
  return Object.freeze(
    calls.map((call) =>
      Object.freeze({
        approvalId: call.approvalId,
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        input: call.input,
        agentName,
      }),
    ),
  );
}
