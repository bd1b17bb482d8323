import { describe, expect, it } from 'vitest';
import { guestGlobals, guestToolsMethods } from '../guest-api.js';
import { guestPrelude } from '../host/guest-prelude.js';

/**
 * What {@link InstallGuestPrelude} evaluates in one fresh context of the interpreter, in this
 * order: `reader`, then `prelude` (installed), then the function `reader` gave, called.
 */
export interface GuestPreludeSources {
  /**
   * A script whose value is a function of no argument. Evaluate it first, before the prelude, so
   * it can remember every global the context starts with; call the function last, after the
   * prelude is installed: it returns a JSON string of what the prelude installed, which
   * {@link InstallGuestPrelude} returns as it is.
   */
  readonly reader: string;
  /**
   * The guest prelude (`guestPrelude` of `@ghost/code-mode/host`). Install it the way the
   * engine's driver does: evaluate it, which gives a function, and call that function with a
   * `write` function (it may do nothing) and the tools JSON `'[]'`.
   */
  readonly prelude: string;
}

/**
 * Installs the guest prelude in a fresh context of the engine's interpreter, as its driver does,
 * between the two steps of {@link GuestPreludeSources.reader}, and returns the reader's JSON string.
 */
export type InstallGuestPrelude = (sources: GuestPreludeSources) => string | Promise<string>;

/** The options of {@link describeGuestPreludeConformance}. */
export interface GuestPreludeConformanceOptions {
  /** The interpreter, for the suite's name, such as `'QuickJS'`. */
  readonly interpreter: string;
  /** Installs the prelude in the interpreter and reads back what it installed. */
  readonly install: InstallGuestPrelude;
}

/** What the reader reports, from inside the context. */
interface InstalledGuest {
  /** The globals the prelude added or replaced, with whether each is writable or enumerable. */
  readonly added: Record<string, { writable: boolean | undefined; enumerable: boolean | undefined }>;
  /** The own keys of `tools` with no tool in the catalog. */
  readonly toolsKeys: string[];
  /** The own keys of `console`. */
  readonly consoleKeys: string[];
}

// Remembers every global's value; the function it gives names each one added or replaced since
// (a global the prelude installs is new or, like a context's own `console`, replaced).
const reader = `(() => {
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

async function installAndRead(install: InstallGuestPrelude): Promise<InstalledGuest> {
  const text = await install({ reader, prelude: guestPrelude });
  const installed: unknown = JSON.parse(text);
  // A wrong install (the reader not called, or its value not returned) fails here, saying so,
  // rather than as a puzzling difference in the cases.
  expect(installed, 'install must return the JSON string the reader gave').toMatchObject({
    added: expect.any(Object),
    toolsKeys: expect.any(Array),
    consoleKeys: expect.any(Array),
  });
  return installed as InstalledGuest;
}

/**
 * Checks the guest API manifest (`guestGlobals` and `guestToolsMethods` of `@ghost/code-mode`)
 * against the guest prelude installed in an engine's interpreter (vitest): the prelude installs
 * exactly the globals the manifest lists, each read-only and not enumerable, exactly its methods
 * of `tools`, and a `console` with exactly the methods the declarations give the model. An engine
 * that installs the shared prelude calls it beside `describeEngineConformance`, with a function
 * that installs the prelude the way its driver does; see docs/guides/custom-engine.md.
 *
 * @example
 * ```ts
 * import { createContext, runInContext } from 'node:vm';
 * import { describeGuestPreludeConformance } from '@ghost/code-mode/testing';
 *
 * describeGuestPreludeConformance({
 *   interpreter: 'a node:vm context',
 *   install: ({ reader, prelude }) => {
 *     const context = createContext({});
 *     const read = runInContext(reader, context) as () => string;
 *     const installGuest = runInContext(prelude, context) as (
 *       write: (text: string) => void,
 *       toolsJson: string,
 *     ) => unknown;
 *     installGuest(() => {}, '[]');
 *     return read();
 *   },
 * });
 * ```
 */
export function describeGuestPreludeConformance(options: GuestPreludeConformanceOptions): void {
  const { install } = options;
  describe(`the guest API manifest, against the prelude in ${options.interpreter}`, () => {
    it('lists exactly the globals the prelude installs, each read-only and not enumerable', async () => {
      const { added } = await installAndRead(install);
      expect(Object.keys(added).sort()).toEqual(guestGlobals.map((global) => global.name).sort());
      for (const property of Object.values(added)) {
        expect(property).toEqual({ writable: false, enumerable: false });
      }
    });

    it("lists exactly the prelude's own methods of tools", async () => {
      const { toolsKeys } = await installAndRead(install);
      expect(toolsKeys.sort()).toEqual(guestToolsMethods.map((method) => method.name).sort());
    });

    it("declares every console method the prelude's console has", async () => {
      const { consoleKeys } = await installAndRead(install);
      const declaration = guestGlobals.find((global) => global.name === 'console')?.declare([]) ?? '';
      const declared = [...declaration.matchAll(/^ {2}(\w+)\(/gm)].map((match) => match[1]);
      expect(declared.sort()).toEqual(consoleKeys.sort());
    });
  });
}
