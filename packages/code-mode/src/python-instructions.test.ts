import { defineTool } from '@ghost/core';
import { unrestrictedCapabilities } from '@ghost/sandbox-unrestricted';
import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { guestGlobals } from './guest-api.js';
import { defaultCodeModeLimits } from './limits.js';
import { pythonDeclarations } from './python-declarations.js';
import { pythonInstructions } from './python-instructions.js';
import { ToolCatalog } from './tool-catalog.js';

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

const sandboxed = {
  name: 'bwrap',
  capabilities: {
    ...unrestrictedCapabilities,
    filesystemIsolation: true,
    networkIsolation: true,
    subprocessDenial: true,
  },
};

describe('pythonInstructions', () => {
  it('asks for Python, says where it runs and what the sandbox enforces', () => {
    const text = pythonInstructions(
      { catalog, limits: defaultCodeModeLimits, sandbox: sandboxed },
      { interpreter: 'a fresh Pyodide interpreter' },
    );
    expect(text).toContain('writing one Python program');
    expect(text).toContain(
      'The program runs in a fresh Pyodide interpreter: nothing survives from one exec to the next',
    );
    expect(text).toContain(
      "The program runs in the 'bwrap' sandbox: no filesystem outside a private temporary directory, no network, no subprocesses.",
    );
  });

  it('claims no containment the sandbox does not enforce', () => {
    const text = pythonInstructions(
      {
        catalog,
        limits: defaultCodeModeLimits,
        sandbox: { name: 'unrestricted', capabilities: unrestrictedCapabilities },
      },
      { interpreter: 'a fresh Pyodide interpreter' },
    );
    expect(text).toContain("The program runs with no operating-system sandbox ('unrestricted').");
  });

  it('teaches every global in its Python form and shows the declarations as Python', () => {
    const text = pythonInstructions(
      { catalog, limits: defaultCodeModeLimits, sandbox: sandboxed },
      { interpreter: 'a fresh Pyodide interpreter' },
    );
    for (const global of guestGlobals) expect(text).toContain(`- ${global.python.instruction}`);
    expect(text).toContain(`\`\`\`python\n${pythonDeclarations(catalog)}\n\`\`\``);
    expect(text).toContain('async def help_center_lookup(*, query: str) -> Any:');
    expect(text).not.toContain('Promise');
  });
});
