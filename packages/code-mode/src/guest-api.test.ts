import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createContext, runInContext } from 'node:vm';
import { unrestrictedCapabilities } from '@ghost/sandbox-unrestricted';
import { describe, expect, it } from 'vitest';
import { guestGlobals, guestToolsMethods } from './guest-api.js';
import { guestPrelude } from './host/guest-prelude.js';
import { javascriptInstructions } from './javascript-instructions.js';
import { defaultCodeModeLimits } from './limits.js';
import { reservedIdentifiers, ToolCatalog } from './tool-catalog.js';

const packageRoot = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);

interface InstalledGuest {
  /** The globals the prelude added to a fresh context, with whether each is writable or enumerable. */
  readonly added: Record<string, { writable: boolean | undefined; enumerable: boolean | undefined }>;
  /** The own keys of `tools` with no tool in the catalog. */
  readonly toolsKeys: string[];
  /** The own keys of `console`. */
  readonly consoleKeys: string[];
}

/**
 * Evaluates the prelude in a fresh V8 context (the engines' own way: the expression, then a call
 * with `write` and the catalog's JSON) and reads back what it installed, from inside the context.
 */
function installInFreshContext(): InstalledGuest {
  const context = createContext({});
  // Remembers every global's value before the prelude runs; a global it installs is new or, like
  // the context's own `console`, replaced.
  const readInstalled = runInContext(
    `(() => {
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
    })()`,
    context,
  ) as () => string;
  const install = runInContext(guestPrelude, context, { filename: 'prelude.js' }) as (
    write: (text: string) => void,
    toolsJson: string,
  ) => unknown;
  install(() => {}, '[]');
  const read = readInstalled();
  return JSON.parse(read) as InstalledGuest;
}

describe('the guest API manifest', () => {
  it('lists exactly the globals the prelude installs, each read-only and not enumerable', () => {
    const { added } = installInFreshContext();
    expect(Object.keys(added).sort()).toEqual(guestGlobals.map((global) => global.name).sort());
    for (const property of Object.values(added)) {
      expect(property).toEqual({ writable: false, enumerable: false });
    }
  });

  it("lists exactly the prelude's own methods of tools", () => {
    const { toolsKeys } = installInFreshContext();
    expect(toolsKeys.sort()).toEqual(guestToolsMethods.map((method) => method.name).sort());
  });

  it('declares each global and tools method by its name, with a doc comment', () => {
    for (const global of guestGlobals) {
      const declaration = global.declare([]);
      expect(declaration).toMatch(/^\/\*\* .+ \*\/\n/);
      expect(declaration).toMatch(new RegExp(`^declare (const|function) ${global.name}\\b`, 'm'));
    }
    for (const method of guestToolsMethods) {
      expect(method.declaration).toMatch(new RegExp(`^ {2}/\\*\\* .+ \\*/\\n {2}${method.name}\\b`));
    }
  });

  it("declares every console method the prelude's console has", () => {
    const { consoleKeys } = installInFreshContext();
    const declaration = guestGlobals.find((global) => global.name === 'console')?.declare([]) ?? '';
    const declared = [...declaration.matchAll(/^ {2}(\w+)\(/gm)].map((match) => match[1]);
    expect(declared.sort()).toEqual(consoleKeys.sort());
  });

  it("gives the catalog's declarations, its reserved identifiers and the instructions", () => {
    const catalog = ToolCatalog.fromTools([], 'Test');
    for (const global of guestGlobals) {
      expect(catalog.declarations).toContain(global.declare([]).split('\n', 1)[0]);
      expect(reservedIdentifiers.has(global.name)).toBe(global.isReserved);
    }
    for (const method of guestToolsMethods) {
      expect(catalog.declarations).toContain(method.declaration);
      expect(reservedIdentifiers.has(method.name)).toBe(true);
    }
    const instructions = javascriptInstructions(
      {
        catalog,
        limits: defaultCodeModeLimits,
        sandbox: { name: 'unrestricted', capabilities: unrestrictedCapabilities },
      },
      { interpreter: 'a fresh V8 isolate' },
    );
    for (const global of guestGlobals) {
      expect(instructions).toContain(`- ${global.instruction}\n`);
      expect(global.instruction).toContain(`\`${global.name}`);
    }
  });
});

describe('the inlined prelude', () => {
  it('is the current text of guest-prelude.mjs (the build writes it)', async () => {
    // The generator's check mode fails, naming the fix, when the .mjs changed and nothing re-ran it.
    await expect(
      run(process.execPath, ['scripts/inline-guest-prelude.mjs', '--check'], { cwd: packageRoot }),
    ).resolves.toMatchObject({ stderr: '' });
  });
});
