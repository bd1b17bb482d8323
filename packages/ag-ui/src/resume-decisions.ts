import type { ResumeEntry } from '@ag-ui/core';
import type { ResumeDecision } from '@ghost/core';
import { AgUiRequestError } from './ag-ui-request-error.js';

/** What the model reads when a person rejects a call without saying why. */
const rejectedWithoutMessage = 'Rejected by the person.';

/** What the model reads when a person dismisses the approval instead of answering it. */
const dismissedMessage = 'The person dismissed the approval request without approving the call.';

/** The payload an approval interrupt asks for (its `responseSchema`). */
interface ApprovalPayload {
  readonly approved: boolean;
  readonly message?: string;
}

function isApprovalPayload(payload: unknown): payload is ApprovalPayload {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return false;
  const { approved, message } = payload as { approved?: unknown; message?: unknown };
  return typeof approved === 'boolean' && (message === undefined || typeof message === 'string');
}

function decisionOf(entry: ResumeEntry, index: number): ResumeDecision {
  if (entry.status === 'cancelled') return { reject: dismissedMessage };
  if (!isApprovalPayload(entry.payload)) {
    throw new AgUiRequestError(
      `The resume entry for interrupt '${entry.interruptId}' has payload ${JSON.stringify(entry.payload) ?? 'undefined'}; answer an approval with { approved: true } or { approved: false, message }.`,
      {
        problems: [
          { path: `resume.${index}.payload`, message: 'not { approved: boolean, message?: string }' },
        ],
      },
    );
  }
  if (entry.payload.approved) return 'approve';
  return { reject: entry.payload.message ?? rejectedWithoutMessage };
}

/**
 * The decisions of a request's `resume` entries, one per approval interrupt (its id is the
 * approval id): `resolved` with `{ approved: true }` approves the call; `{ approved: false,
 * message? }` rejects it (the model reads the message); `cancelled` rejects it as dismissed.
 * Throws an {@link AgUiRequestError} (400) for a payload that is no approval answer.
 */
export function resumeDecisions(resume: readonly ResumeEntry[]): Record<string, ResumeDecision> {
  const decisions: Record<string, ResumeDecision> = {};
  resume.forEach((entry, index) => {
    decisions[entry.interruptId] = decisionOf(entry, index);
  });
  return decisions;
}
