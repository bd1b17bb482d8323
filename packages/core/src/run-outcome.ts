/** How a run ended. */
export type RunOutcome = 'completed' | 'failed' | 'partial' | 'cancelled';
