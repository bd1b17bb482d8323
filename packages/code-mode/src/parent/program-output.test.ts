import { describe, expect, it } from 'vitest';
import { keepHeadAndTail } from '../shared/head-and-tail.js';
import { exceedsJsonDepth } from '../shared/json-depth.js';
import { limitProgramCompletion } from '../shared/program-completion-limit.js';
import { ProgramOutput } from './program-output.js';

describe('ProgramOutput', () => {
  it('places one note between the head and the tail a host kept', () => {
    const output = new ProgramOutput(100);
    output.append('head\n');
    output.append('tail\n', 5000);
    expect(output.take()).toBe(
      'head\n\n[… 5,000 bytes of output cut here: the output passed its 100-byte limit, so its start and end are kept …]\ntail\n',
    );
  });

  it('keeps the start of a text over the limit and notes the rest at the next observation', () => {
    const output = new ProgramOutput(10);
    output.append('ü'.repeat(8)); // 16 bytes: 5 characters fit in 10 bytes
    expect(output.take()).toBe(
      'üüüüü\n[… 6 bytes of output cut here: the output passed its 10-byte limit, so its start and end are kept …]\n',
    );
    output.append('more');
    expect(output.take()).toMatch(/^\n\[… 4 bytes of output cut here/);
  });

  it('coalesces cut counts that follow one another into one note', () => {
    const output = new ProgramOutput(1_000);
    for (let frame = 0; frame < 10_000; frame += 1) output.append('', 3);
    output.append('after');
    expect(output.take()).toBe(
      '\n[… 30,000 bytes of output cut here: the output passed its 1,000-byte limit, so its start and end are kept …]\nafter',
    );
  });

  it('counts notes against an allowance, so a note before every frame cannot grow the output', () => {
    const output = new ProgramOutput(1_000_000);
    for (let frame = 0; frame < 100_000; frame += 1) output.append('x', 1);
    const taken = output.take();
    // Text, notes while they fit in 4 KiB, then everything else cut and noted once.
    expect(Buffer.byteLength(taken)).toBeLessThan(4_096 + 200 + 100);
    expect(taken).toMatch(/\[… [\d,]+ bytes of output cut here[^\]]*\]\n$/);
  });
});

describe('keepHeadAndTail', () => {
  const where = { what: 'the error message', limit: 'outputBytes' };

  it('leaves text within the limit alone', () => {
    expect(keepHeadAndTail('short', 10, where)).toBe('short');
  });

  it('keeps the head and the tail within the limit, cutting on character boundaries', () => {
    const text = `${'🎉'.repeat(1000)}middle${'é'.repeat(1000)}`;
    const kept = keepHeadAndTail(text, 1_000, where);
    expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(1_000);
    expect(kept).toMatch(
      /^(🎉)+\n\[… [\d,]+ bytes of the error message cut here: it passed its 1,000-byte limit \(limits\.outputBytes\), so its start and end are kept …\]\n(é)+$/,
    );
  });
});

describe('limitProgramCompletion', () => {
  it('passes values within outputBytes and refuses larger ones, naming the size', () => {
    expect(limitProgramCompletion({ status: 'completed', value: { a: [1, 2] } }, 100)).toEqual({
      status: 'completed',
      value: { a: [1, 2] },
    });
    expect(limitProgramCompletion({ status: 'completed', value: 'x'.repeat(200) }, 100)).toEqual({
      status: 'error',
      error: expect.stringMatching(
        /^The program's value is 202 bytes of JSON, over the 100-byte limit \(limits\.outputBytes\)\. Return less/,
      ),
    });
  });

  it('refuses a value nested deeper than values may', () => {
    let deep: unknown = 1;
    for (let level = 0; level < 300; level += 1) deep = [deep];
    expect(limitProgramCompletion({ status: 'completed', value: deep as never }, 1_000_000).error).toMatch(
      /nests deeper than 256 levels/,
    );
  });
});

describe('exceedsJsonDepth', () => {
  it('measures nesting without recursion, even a million levels deep', () => {
    expect(exceedsJsonDepth(1, 0)).toBe(false);
    expect(exceedsJsonDepth([], 0)).toBe(true);
    expect(exceedsJsonDepth({ a: [[1]] }, 3)).toBe(false);
    expect(exceedsJsonDepth({ a: [[1]] }, 2)).toBe(true);
    const deep = JSON.parse(`${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`) as unknown;
    expect(exceedsJsonDepth(deep, 256)).toBe(true);
  });
});
