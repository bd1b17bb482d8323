import { describe, expect, it } from 'vitest';
import { prepareProgramSource } from './program-source.js';

describe('prepareProgramSource', () => {
  it('returns the final expression', () => {
    expect(prepareProgramSource('const a = 1;\na + 1')).toEqual({
      ok: true,
      source: 'const a = 1;\nreturn (a + 1);',
    });
  });

  it('keeps an object literal an object, and a trailing comment after it', () => {
    expect(prepareProgramSource('({ a: 1 }) // done')).toEqual({
      ok: true,
      source: 'return (({ a: 1 })); // done',
    });
  });

  it('allows top-level await and return', () => {
    expect(prepareProgramSource('const x = await f();\nif (x) return 1;\nx')).toMatchObject({ ok: true });
  });

  it('leaves a program that ends in a declaration unchanged', () => {
    expect(prepareProgramSource('let done = true;')).toEqual({ ok: true, source: 'let done = true;' });
  });

  it('reports a syntax error with its line and column', () => {
    expect(prepareProgramSource('const a = 1;\nconst = 2;')).toEqual({
      ok: false,
      error: 'SyntaxError: Unexpected token (line 2, column 7)',
    });
  });
});
