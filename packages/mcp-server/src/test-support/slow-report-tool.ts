import { defineTool } from '@ghost/core';
import Type from 'typebox';

/**
 * A tool that answers after a minute, or as soon as its call is aborted (the program was stopped):
 * a program calling it is still working when an observation ends. `weather-tools.mjs` has the
 * same tool for the bin's tests, as a plain tool module a user would write.
 */
export const slowReportTool = defineTool({
  name: 'slow_report',
  description: 'Builds a report slowly.',
  input: Type.Object({}),
  timeoutMs: 120_000,
  execute: (_input, context) =>
    new Promise((resolve) => {
      const timer = setTimeout(() => resolve({ report: 'done' }), 60_000);
      context.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve({ report: 'aborted' });
      });
    }),
});
