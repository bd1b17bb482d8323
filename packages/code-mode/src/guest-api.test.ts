import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createContext, runInContext } from 'node:vm';
import { unrestrictedCapabilities } from '@ghost/sandbox-unrestricted';
import { describe, expect, it } from 'vitest';
import { guestGlobals, guestToolsMethods } from './guest-api.js';
import { javascriptInstructions } from './javascript-instructions.js';
import { defaultCodeModeLimits } from './limits.js';
import { describeGuestPreludeConformance } from './testing/describe-guest-prelude-conformance.js';
import { reservedIdentifiers, ToolCatalog } from './tool-catalog.js';

const packageRoot = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);

// The prelude in a fresh V8 context, installed the engines' own way: the expression, then a call
// with `write` and the catalog's JSON.
describeGuestPreludeConformance({
  interpreter: 'a node:vm context',
  install: ({ reader, prelude }) => {
    const context = createContext({});
    const read = runInContext(reader, context) as () => string;
    const install = runInContext(prelude, context, { filename: 'prelude.js' }) as (
      write: (text: string) => void,
      toolsJson: string,
    ) => unknown;
    install(() => {}, '[]');
    return read();
  },
});

describe('the guest API manifest', () => {
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
