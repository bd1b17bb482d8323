// A tool module as a user writes one for ghost-mcp's "toolModules": its default export is a list
// of Ghost tools. The bin's tests name it in their config files.
import { defineTool, ToolError } from '@ghost/core';
import Type from 'typebox';

const weather = defineTool({
  name: 'weather',
  description: 'The temperature in a city, in °C.',
  input: Type.Object({ city: Type.String() }),
  execute: ({ city }) => {
    if (city === 'Atlantis') throw new ToolError('No weather station in Atlantis.');
    return { city, temperature: city === 'Paris' ? 21 : 17 };
  },
});

const slowReport = defineTool({
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

export default [weather, slowReport];
