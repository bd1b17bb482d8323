import { defaultCodeModeLimits, ToolCatalog, unrestrictedCapabilities } from '@ghost/code-mode';
import { defineTool } from '@ghost/core';
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

describe('quickjsInstructions', () => {
  it('teaches the guest API and includes the declarations', () => {
    const text = quickjsInstructions({
      catalog,
      limits: defaultCodeModeLimits,
      sandbox: { name: 'unrestricted', capabilities: unrestrictedCapabilities },
    });
    for (const part of [
      'exec',
      'wait',
      'stop',
      'still_working',
      'Promise.all',
      'tools.call',
      'ALL_TOOLS',
      'text(value)',
      'exit(value)',
      catalog.declarations,
    ]) {
      expect(text).toContain(part);
    }
  });

  it('claims no containment the sandbox does not enforce', () => {
    const open = quickjsInstructions({
      catalog,
      limits: defaultCodeModeLimits,
      sandbox: { name: 'unrestricted', capabilities: unrestrictedCapabilities },
    });
    expect(open).toContain("no operating-system sandbox ('unrestricted')");
    expect(open).not.toMatch(/no network|no subprocesses/);
    const contained = quickjsInstructions({
      catalog,
      limits: defaultCodeModeLimits,
      sandbox: {
        name: 'bwrap',
        capabilities: {
          ...unrestrictedCapabilities,
          networkIsolation: true,
          filesystemIsolation: true,
          subprocessDenial: true,
        },
      },
    });
    expect(contained).toContain(
      "the 'bwrap' sandbox: no filesystem outside a private temporary directory, no network, no subprocesses",
    );
  });
});
