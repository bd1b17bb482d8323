import { describe, expect, it } from 'vitest';
import { toJsonValue } from './json-value.js';

describe('toJsonValue', () => {
  it('keeps JSON values and applies toJSON like JSON.stringify', () => {
    const date = new Date('2026-01-02T03:04:05.000Z');
    expect(toJsonValue({ a: [1, 'x', null, true], when: date, gone: undefined })).toEqual({
      ok: true,
      value: { a: [1, 'x', null, true], when: '2026-01-02T03:04:05.000Z' },
    });
    expect(toJsonValue(undefined)).toEqual({ ok: true, value: undefined });
  });

  it('names the first part that is not JSON', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(toJsonValue({ n: 1n })).toEqual({
      ok: false,
      problem: 'the result.n is a BigInt; convert it to a string or number',
    });
    expect(toJsonValue({ f: () => 1 })).toMatchObject({ ok: false, problem: 'the result.f is a function' });
    expect(toJsonValue([Symbol('s')])).toMatchObject({ ok: false, problem: 'the result[0] is a symbol' });
    expect(toJsonValue({ x: Number.NaN })).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/NaN/),
    });
    expect(toJsonValue(cycle)).toMatchObject({ ok: false, problem: expect.stringMatching(/cycle/) });
  });

  it('accepts the same object twice when it is not a cycle', () => {
    const shared = { x: 1 };
    expect(toJsonValue({ a: shared, b: shared })).toEqual({ ok: true, value: { a: { x: 1 }, b: { x: 1 } } });
  });
});
