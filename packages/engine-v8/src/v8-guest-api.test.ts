import { describeGuestPreludeConformance } from '@ghost/code-mode/testing';
import { describe } from 'vitest';
import {
  isolatedVmHereProblem,
  loadIsolatedVmHere,
  needingIsolatedVm,
} from './test-support/isolated-vm-here.js';

// The prelude in a fresh isolate, installed as the driver's bootstrap does (the expression, then
// a call with an isolated-vm callback as `write` and the catalog's JSON). The bootstrap's own
// start getter is the driver's, not the prelude's, so the bare prelude is what is checked here.
describe.skipIf(isolatedVmHereProblem !== undefined)(
  needingIsolatedVm('the guest prelude in a V8 isolate'),
  () => {
    describeGuestPreludeConformance({
      interpreter: 'a V8 isolate (isolated-vm)',
      install: async ({ reader, prelude }) => {
        const isolatedVm = loadIsolatedVmHere();
        const isolate = new isolatedVm.Isolate({ memoryLimit: 32 });
        try {
          const context = await isolate.createContext();
          const read = await context.eval(reader, { filename: 'reader.js', reference: true });
          const install = await context.eval(prelude, { filename: 'prelude.js', reference: true });
          const write = new isolatedVm.Callback(() => {});
          const control = await install.apply(undefined, [write, '[]'], { result: { reference: true } });
          const text: unknown = await read.apply(undefined, [], { result: { copy: true } });
          for (const reference of [control, install, read]) reference.release();
          return String(text);
        } finally {
          isolate.dispose();
        }
      },
    });
  },
);
