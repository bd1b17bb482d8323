import { defaultCodeModeLimits } from '@ghost/code-mode';
import { javascriptInstructions, ToolCatalog } from '@ghost/code-mode/engine';
import { defineTool } from '@ghost/core';
import { unrestrictedCapabilities } from '@ghost/sandbox-unrestricted';
import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { quickjsInstructions } from './quickjs-instructions.js';

const catalog = ToolCatalog.fromTools(
  [
    defineTool({
      name: 'help_center_lookup',
      description: 'Find a support answer by topic.',
      input: Type.Object({ query: Type.String() }),
      execute: () => '',
    }),
  ],
  'Test',
);

// What the shared text teaches (the guest API, the declarations, only the containment the sandbox
// enforces) is tested with javascriptInstructions in @ghost/code-mode; here, only what QuickJS adds.
describe('quickjsInstructions', () => {
  it("is code mode's shared JavaScript text, naming a fresh QuickJS interpreter", () => {
    const context = {
      catalog,
      limits: defaultCodeModeLimits,
      sandbox: { name: 'unrestricted', capabilities: unrestrictedCapabilities },
    };
    const text = quickjsInstructions(context);
    expect(text).toBe(javascriptInstructions(context, { interpreter: 'a fresh QuickJS interpreter' }));
    expect(text).toContain('a fresh QuickJS interpreter');
    expect(text).toContain(catalog.declarations);
  });
});
