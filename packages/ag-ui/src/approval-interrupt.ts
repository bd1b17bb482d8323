import type { Interrupt } from '@ag-ui/core';
import type { PendingApproval } from '@ghost/core';

/** The `reason` of the interrupt a tool call waiting for a person's approval ends a run with. */
const approvalInterruptReason = 'tool_approval';

/**
 * The answer an approval interrupt expects in the next request's `resume` entry (`payload`):
 * `{ approved: true }`, or `{ approved: false, message }` (the model reads the message).
 */
const approvalResponseSchema = {
  type: 'object',
  properties: {
    approved: { type: 'boolean' },
    message: { type: 'string', description: 'Why, when rejected; the model reads it.' },
  },
  required: ['approved'],
};

/**
 * A call waiting for approval in a suspended run, as an AG-UI interrupt: its id is the approval
 * id the resume answers, and `metadata.ghost` carries the tool, its input and the agent.
 */
export function approvalInterrupt(pending: PendingApproval): Interrupt {
  return {
    id: pending.approvalId,
    reason: approvalInterruptReason,
    message: `Allow the call to ${pending.toolName}?`,
    toolCallId: pending.toolCallId,
    responseSchema: approvalResponseSchema,
    metadata: {
      ghost: {
        toolName: pending.toolName,
        input: pending.input,
        agentName: pending.agentName,
        ...(pending.path === undefined ? {} : { path: pending.path }),
      },
    },
  };
}
