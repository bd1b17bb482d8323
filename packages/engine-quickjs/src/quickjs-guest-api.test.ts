import { describeGuestPreludeConformance } from '@ghost/code-mode/testing';
import variant from '@jitl/quickjs-wasmfile-release-sync';
import { newQuickJSWASMModuleFromVariant, type QuickJSSyncVariant } from 'quickjs-emscripten-core';

// The variant's types describe its CommonJS build; under ESM the default import is the variant.
const releaseVariant = variant as unknown as QuickJSSyncVariant;

// Installs the prelude in a fresh QuickJS context as the driver does, and reads back what it installed.
describeGuestPreludeConformance({
  interpreter: 'QuickJS',
  install: async ({ reader, prelude }) => {
    const module = await newQuickJSWASMModuleFromVariant(releaseVariant);
    const context = module.newContext();
    try {
      const read = context.unwrapResult(context.evalCode(reader, 'reader.js'));
      const install = context.unwrapResult(context.evalCode(prelude, 'prelude.js'));
      const write = context.newFunction('write', () => {});
      const toolsJson = context.newString('[]');
      context.unwrapResult(context.callFunction(install, context.undefined, write, toolsJson)).dispose();
      const installed = context.unwrapResult(context.callFunction(read, context.undefined));
      const text = context.getString(installed);
      for (const handle of [installed, toolsJson, write, install, read]) handle.dispose();
      return text;
    } finally {
      context.dispose();
    }
  },
});
