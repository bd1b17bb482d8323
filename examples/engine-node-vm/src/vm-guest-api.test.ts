import { createContext, runInContext } from 'node:vm';
import { describeGuestPreludeConformance } from '@ghost/code-mode/testing';

// Installs the prelude in a fresh node:vm context made as vm-host.mjs makes it, and reads back
// what it installed: the globals, the methods of `tools` and `console` the manifest promises.
describeGuestPreludeConformance({
  interpreter: 'a node:vm context',
  install: ({ reader, prelude }) => {
    const context = createContext({}, { microtaskMode: 'afterEvaluate', codeGeneration: { wasm: false } });
    // Evaluated first: remembers the context's own globals, and gives the function that reports.
    const read = runInContext(reader, context, { filename: 'reader.js' }) as () => string;
    // As the driver does: the prelude gives a function of `write` and the tools JSON.
    const installGuest = runInContext(prelude, context, { filename: 'prelude.js' }) as (
      write: (text: string) => void,
      toolsJson: string,
    ) => unknown;
    installGuest(() => {}, '[]');
    return read();
  },
});
