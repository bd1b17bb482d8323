/**
 * How a run ended. `suspended` is Ghost's addition to the four outcomes: a run that paused for a
 * person's approval with `approvals: 'suspend'`, to be continued by `agent.resume()`; only an
 * application that opted in ever sees it.
 */
export type RunOutcome = 'completed' | 'failed' | 'partial' | 'cancelled' | 'suspended';
