import { defineTool } from '@ghost/core';
import { unrestrictedCapabilities } from '@ghost/sandbox-unrestricted';
import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { javascriptInstructions } from './javascript-instructions.js';
import { defaultCodeModeLimits } from './limits.js';
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

const interpreter = { interpreter: 'a fresh V8 isolate' };

describe('javascriptInstructions', () => {
  it('says where the program runs, as the engine describes it', () => {
    const text = javascriptInstructions(
      {
        catalog,
        limits: defaultCodeModeLimits,
        sandbox: { name: 'unrestricted', capabilities: unrestrictedCapabilities },
      },
      interpreter,
    );
    expect(text).toContain(
      'The program runs in a fresh V8 isolate: nothing survives from one exec to the next',
    );
  });

  it('teaches the guest API and includes the declarations', () => {
    const text = javascriptInstructions(
      {
        catalog,
        limits: defaultCodeModeLimits,
        sandbox: { name: 'unrestricted', capabilities: unrestrictedCapabilities },
      },
      interpreter,
    );
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
    const open = javascriptInstructions(
      {
        catalog,
        limits: defaultCodeModeLimits,
        sandbox: { name: 'unrestricted', capabilities: unrestrictedCapabilities },
      },
      interpreter,
    );
    expect(open).toContain("no operating-system sandbox ('unrestricted')");
    expect(open).not.toMatch(/no network|no subprocesses/);
    const contained = javascriptInstructions(
      {
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
      },
      interpreter,
    );
    expect(contained).toContain(
      "the 'bwrap' sandbox: no filesystem outside a private temporary directory, no network, no subprocesses",
    );
  });
});
