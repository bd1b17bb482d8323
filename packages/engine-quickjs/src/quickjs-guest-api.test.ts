import { guestGlobals, guestToolsMethods } from '@ghost/code-mode';
import { guestPrelude } from '@ghost/code-mode/host';
import variant from '@jitl/quickjs-wasmfile-release-sync';
import { newQuickJSWASMModuleFromVariant, type QuickJSSyncVariant } from 'quickjs-emscripten-core';
import { describe, expect, it } from 'vitest';

// The variant's types describe its CommonJS build; under ESM the default import is the variant.
const releaseVariant = variant as unknown as QuickJSSyncVariant;

interface InstalledGuest {
  readonly added: Record<string, { writable: boolean | undefined; enumerable: boolean | undefined }>;
  readonly toolsKeys: string[];
  readonly consoleKeys: string[];
}

// Remembers every global's value; the function it returns names each one added or replaced since.
const rememberGlobals = `(() => {
  const before = new Map(Object.getOwnPropertyNames(globalThis).map((name) => [name, globalThis[name]]));
  return () => JSON.stringify({
    added: Object.fromEntries(
      Object.getOwnPropertyNames(globalThis)
        .filter((name) => !before.has(name) || !Object.is(before.get(name), globalThis[name]))
        .map((name) => {
          const property = Object.getOwnPropertyDescriptor(globalThis, name);
          return [name, { writable: property.writable, enumerable: property.enumerable }];
        }),
    ),
    toolsKeys: Reflect.ownKeys(tools),
    consoleKeys: Object.keys(console),
  });
})()`;

/** Installs the prelude in a fresh QuickJS context as the driver does, and reads back what it installed. */
async function installInQuickJS(): Promise<InstalledGuest> {
  const module = await newQuickJSWASMModuleFromVariant(releaseVariant);
  const context = module.newContext();
  try {
    const readInstalled = context.unwrapResult(context.evalCode(rememberGlobals, 'remember.js'));
    const install = context.unwrapResult(context.evalCode(guestPrelude, 'prelude.js'));
    const write = context.newFunction('write', () => {});
    const toolsJson = context.newString('[]');
    context.unwrapResult(context.callFunction(install, context.undefined, write, toolsJson)).dispose();
    const read = context.unwrapResult(context.callFunction(readInstalled, context.undefined));
    const text = context.getString(read);
    for (const handle of [read, toolsJson, write, install, readInstalled]) handle.dispose();
    return JSON.parse(text) as InstalledGuest;
  } finally {
    context.dispose();
  }
}

describe('the guest API manifest, against the prelude in QuickJS', () => {
  it('lists exactly the globals the prelude installs, each read-only and not enumerable', async () => {
    const { added } = await installInQuickJS();
    expect(Object.keys(added).sort()).toEqual(guestGlobals.map((global) => global.name).sort());
    for (const property of Object.values(added)) {
      expect(property).toEqual({ writable: false, enumerable: false });
    }
  });

  it("lists exactly the prelude's own methods of tools, and declares each console method", async () => {
    const { toolsKeys, consoleKeys } = await installInQuickJS();
    expect(toolsKeys.sort()).toEqual(guestToolsMethods.map((method) => method.name).sort());
    const declaration = guestGlobals.find((global) => global.name === 'console')?.declare([]) ?? '';
    const declared = [...declaration.matchAll(/^ {2}(\w+)\(/gm)].map((match) => match[1]);
    expect(declared.sort()).toEqual(consoleKeys.sort());
  });
});
