import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  CancelledError,
  ConfigurationError,
  GhostError,
  type GhostErrorCode,
  ModelError,
  ModelRateLimitError,
  ModelUnavailableError,
  markErrorClass,
  PluginNotFoundError,
  PluginNotInstalledError,
  SandboxUnavailableError,
  ToolError,
  ToolSourceError,
  ToolTimeoutError,
} from './errors.js';

describe('GhostError', () => {
  it('carries a code, typed fields and cause', () => {
    const cause = new Error('root');
    const error = new ConfigurationError('Bad option.', {
      code: 'OPTION_UNKNOWN',
      option: 'x',
      cause,
    });
    expect(error.code).toBe('OPTION_UNKNOWN');
    expect(error.option).toBe('x');
    expect(error.cause).toBe(cause);
    expect(error.name).toBe('ConfigurationError');
    expect(new SandboxUnavailableError('no bwrap').code).toBe('SANDBOX_UNAVAILABLE');
  });

  it('isInstance recognises the class and its bases, also across package copies', () => {
    const error = new ToolError('nope');
    expect(ToolError.isInstance(error)).toBe(true);
    expect(GhostError.isInstance(error)).toBe(true);
    expect(CancelledError.isInstance(error)).toBe(false);
    expect(GhostError.isInstance(new Error('plain'))).toBe(false);
    expect(GhostError.isInstance(null)).toBe(false);
  });

  it('does not recognise a look-alike class with the same name but no marker', () => {
    // Same class name, same code, a GhostError-shaped object, but no marker on its prototype.
    class ToolErrorLookAlike extends Error {
      readonly code = 'TOOL_FAILED';
    }
    Object.defineProperty(ToolErrorLookAlike, 'name', { value: 'ToolError' });
    const lookAlike = new ToolErrorLookAlike('nope');
    lookAlike.name = 'ToolError';
    expect(lookAlike.constructor.name).toBe('ToolError');
    expect(ToolError.isInstance(lookAlike)).toBe(false);
    expect(GhostError.isInstance(lookAlike)).toBe(false);
    // Nor the list of class names earlier pre-releases put under `Symbol.for('ghost.error')`.
    const namesOnly = Object.assign(new Error('copy'), {
      [Symbol.for('ghost.error')]: ['ToolError', 'GhostError'],
    });
    expect(ToolError.isInstance(namesOnly)).toBe(false);
    expect(GhostError.isInstance(namesOnly)).toBe(false);
  });
});

/** The files of core's error families: copied together, they make a second copy of the package's errors. */
const errorFamilyFiles = [
  'cleanup-error.ts',
  'configuration-error.ts',
  'core-error-code.ts',
  'errors.ts',
  'ghost-error.ts',
  'model-errors.ts',
  'plugin-errors.ts',
  'run-errors.ts',
  'sandbox-errors.ts',
  'tool-errors.ts',
  'workspace-closed-error.ts',
];

/** Loads a second copy of core's errors from another directory, as a duplicated install would. */
async function loadSecondCopy(): Promise<{ copy: typeof import('./errors.js'); directory: string }> {
  const directory = await mkdtemp(join(tmpdir(), 'ghost-errors-copy-'));
  for (const file of errorFamilyFiles) await copyFile(join(sourceDirectory, file), join(directory, file));
  const copy = (await import(
    pathToFileURL(join(directory, 'errors.ts')).href
  )) as typeof import('./errors.js');
  return { copy, directory };
}

const sourceDirectory = dirname(fileURLToPath(import.meta.url));

describe('GhostError markers', () => {
  it('recognises errors from a second copy of the package on disk, and only as their own classes', async () => {
    const { copy, directory } = await loadSecondCopy();
    try {
      expect(copy.ToolError).not.toBe(ToolError);
      const foreign = new copy.ModelRateLimitError('slow down', { statusCode: 429 });
      expect(foreign instanceof ModelRateLimitError).toBe(false);
      expect(ModelRateLimitError.isInstance(foreign)).toBe(true);
      expect(ModelError.isInstance(foreign)).toBe(true);
      expect(GhostError.isInstance(foreign)).toBe(true);
      expect(ModelUnavailableError.isInstance(foreign)).toBe(false);
      expect(ConfigurationError.isInstance(foreign)).toBe(false);
      // And the other way round: the copy recognises this copy's errors.
      expect(copy.PluginNotFoundError.isInstance(new PluginNotFoundError('none'))).toBe(true);
      expect(copy.ConfigurationError.isInstance(new PluginNotFoundError('none'))).toBe(true);
      expect(copy.ToolError.isInstance(new PluginNotFoundError('none'))).toBe(false);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('still recognises classes whose names a minifier shortened, and keeps their names', async () => {
    const { copy, directory } = await loadSecondCopy();
    try {
      // What a minifier does: every class gets a short name, and two classes may share one.
      for (const errorClass of [
        copy.ToolError,
        copy.ConfigurationError,
        copy.GhostError,
        copy.ToolTimeoutError,
      ]) {
        Object.defineProperty(errorClass, 'name', { value: 'e' });
      }
      const toolError = new copy.ToolError('nope');
      expect(toolError.name).toBe('ToolError');
      expect(ToolError.isInstance(toolError)).toBe(true);
      expect(GhostError.isInstance(toolError)).toBe(true);
      expect(ConfigurationError.isInstance(toolError)).toBe(false);
      expect(ToolTimeoutError.isInstance(toolError)).toBe(false);
      expect(copy.ConfigurationError.isInstance(new copy.ToolError('nope'))).toBe(false);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('answers for a subclass a user did not mark with instanceof, without answering for its parent', () => {
    class InvoiceToolError extends ToolError {}
    const invoiceError = new InvoiceToolError('No invoice 7.');
    expect(InvoiceToolError.isInstance(invoiceError)).toBe(true);
    expect(InvoiceToolError.isInstance(new ToolError('other'))).toBe(false);
    expect(ToolError.isInstance(invoiceError)).toBe(true);
    expect(invoiceError.name).toBe('InvoiceToolError');
  });

  it('lets a user mark a subclass so it is recognised across copies too', () => {
    class InvoiceMissingError extends GhostError {
      static {
        markErrorClass(InvoiceMissingError, 'InvoiceMissingError');
      }
      declare readonly code: 'INVOICE_MISSING';
      constructor(message: string) {
        super(message, { code: 'INVOICE_MISSING' });
      }
    }
    const lookalike = Object.assign(new Error('copy'), {
      [Symbol.for('ghost.error.InvoiceMissingError')]: true,
    });
    expect(InvoiceMissingError.isInstance(lookalike)).toBe(true);
    expect(InvoiceMissingError.isInstance(new ToolError('other'))).toBe(false);
    expect(new InvoiceMissingError('gone').name).toBe('InvoiceMissingError');
  });
});

describe('typed fields', () => {
  it('carries the facts of the failure as typed fields, and has no details getter', () => {
    const limited = new ModelRateLimitError('Slow down.', {
      statusCode: 429,
      provider: 'openai',
      requestId: 'req_1',
      retryAfterMs: 2000,
    });
    expect(limited.code).toBe('MODEL_RATE_LIMITED');
    expect([limited.statusCode, limited.provider, limited.requestId, limited.retryAfterMs]).toEqual([
      429,
      'openai',
      'req_1',
      2000,
    ]);
    expect(limited.isRetryable).toBe(true);

    const missing = new PluginNotInstalledError('Install it.', {
      kind: 'engine',
      pluginName: 'v8',
      packageName: '@ghost/engine-v8',
    });
    expect([missing.kind, missing.pluginName, missing.packageName]).toEqual([
      'engine',
      'v8',
      '@ghost/engine-v8',
    ]);
    expect('details' in missing).toBe(false);
    expect('details' in new CancelledError()).toBe(false);
  });

  it('types each class code as its own union, so a switch narrows', () => {
    expectTypeOf<CancelledError['code']>().toEqualTypeOf<'RUN_CANCELLED'>();
    expectTypeOf<PluginNotFoundError['code']>().toEqualTypeOf<'PLUGIN_NOT_FOUND'>();
    expectTypeOf<'TOOL_TIMEOUT'>().toExtend<GhostErrorCode>();
    expectTypeOf<'CONFIGURATION_INVALID'>().toExtend<ConfigurationError['code']>();
    const failures: (ToolSourceError | CancelledError)[] = [
      new ToolSourceError('The source failed.', { source: 'crm' }),
    ];
    const error = failures[0];
    if (error === undefined) throw new Error('no failure to check');
    switch (error.code) {
      case 'TOOL_SOURCE_FAILED':
        expectTypeOf(error).toEqualTypeOf<ToolSourceError>();
        expect(error.source).toBe('crm');
        break;
      case 'RUN_CANCELLED':
        expectTypeOf(error).toEqualTypeOf<CancelledError>();
        throw new Error('a ToolSourceError answered RUN_CANCELLED');
    }
  });
});
