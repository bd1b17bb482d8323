import type { Reporter } from 'vitest/node';

/** Prints `tests: N passed, N failed, N skipped` as the last line of a run. */
export default class SummaryReporter implements Reporter {}
