import { ConfigurationError } from './errors.js';
import type { ResumeDecision } from './resume-paused-calls.js';
import type { SessionOptions } from './run-session.js';

/** How a run's own agent's calls that need approval wait (`ask(input, { approvals })`). */
export type ApprovalMode = 'wait' | 'suspend';

/**
 * The options of `agent.resume()` and `agent.streamResume()`: the session whose paused run to
 * continue, the decisions for its pending approvals, and the run options `ask` takes.
 */
export interface ResumeOptions {
  /** The session the run paused in (the same `id` and `actor`). */
  readonly session: SessionOptions;
  /**
   * A decision per approval id (`run.pendingApprovals`, or the `approval_requested` events):
   * `'approve'`, or `{ reject: message }` (the model reads the message). Approvals left out keep
   * waiting: the resumed run runs what was decided and suspends again for the rest.
   */
  readonly decisions?: Readonly<Record<string, ResumeDecision>>;
  /**
   * Removes the paused run without running anything (its calls never run, and nothing of its turn
   * is written); the session takes new runs again. Default false.
   */
  readonly discard?: boolean;
  /** How later calls that need approval wait; default `suspend` (see `AskOptions.approvals`). */
  readonly approvals?: ApprovalMode;
}

const resumeOnlyKeys = new Set(['decisions', 'discard']);

/** Checks what `resume` alone takes; throws `ConfigurationError` (`RESUME_OPTION_INVALID`). */
export function checkResumeDecisions(options: ResumeOptions): {
  readonly decisions: ReadonlyMap<string, ResumeDecision>;
  readonly discard: boolean;
} {
  const invalid = (message: string, option: string) =>
    new ConfigurationError(message, { code: 'RESUME_OPTION_INVALID', option });
  if (options.session === undefined) {
    throw invalid(
      'resume() takes the session the run paused in: { session: { id, actor }, decisions }.',
      'session',
    );
  }
  const { decisions = {}, discard = false } = options;
  if (typeof discard !== 'boolean')
    throw invalid('resume() option discard must be true or false.', 'discard');
  if (typeof decisions !== 'object' || decisions === null || Array.isArray(decisions)) {
    throw invalid(
      "resume() takes decisions as { [approvalId]: 'approve' | { reject: message } }.",
      'decisions',
    );
  }
  const checked = new Map<string, ResumeDecision>();
  for (const [approvalId, decision] of Object.entries(decisions)) {
    const isReject =
      typeof decision === 'object' &&
      decision !== null &&
      typeof (decision as { reject?: unknown }).reject === 'string';
    if (decision !== 'approve' && !isReject) {
      throw invalid(
        `resume() got ${JSON.stringify(decision)} for approval '${approvalId}'; a decision is 'approve' or { reject: message }.`,
        `decisions.${approvalId}`,
      );
    }
    checked.set(approvalId, decision === 'approve' ? 'approve' : { reject: decision.reject });
  }
  if (discard && checked.size > 0) {
    throw invalid('resume() takes decisions or discard: true, not both.', 'discard');
  }
  return { decisions: checked, discard };
}

/** The options a resume passes on to the run as `ask` would take them. */
export function askOptionsOfResume<Options extends ResumeOptions>(
  options: Options,
): Omit<Options, 'decisions' | 'discard'> {
  return Object.fromEntries(Object.entries(options).filter(([key]) => !resumeOnlyKeys.has(key))) as Omit<
    Options,
    'decisions' | 'discard'
  >;
}

/** Checks `ask`'s `approvals` against its session: suspending keeps the pause in the session. */
export function checkApprovalMode(approvals: unknown, hasSession: boolean): ApprovalMode {
  if (approvals === undefined || approvals === 'wait') return 'wait';
  if (approvals !== 'suspend') {
    throw new ConfigurationError(
      `ask() option approvals is 'wait' or 'suspend'; got ${JSON.stringify(approvals)}.`,
      {
        code: 'AGENT_OPTION_INVALID',
        option: 'approvals',
      },
    );
  }
  if (!hasSession) {
    throw new ConfigurationError(
      "ask() was given approvals: 'suspend' without a session: the paused run is kept in the session, so pass session: { id, actor } (and a runtime with a sessionStore).",
      { code: 'AGENT_OPTION_INVALID', option: 'approvals', conflicting: ['session'] },
    );
  }
  return 'suspend';
}
