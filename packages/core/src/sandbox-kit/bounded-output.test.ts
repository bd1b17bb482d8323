import { describe, expect, it } from 'vitest';
import { BoundedOutputBuffer, defaultBoundedOutputBytes } from './bounded-output.js';

describe('BoundedOutputBuffer', () => {
  it('keeps everything under the cap', () => {
    const output = new BoundedOutputBuffer(16);
    output.append(Buffer.from('hello '));
    output.append(Buffer.from('world'));
    expect(output.text).toBe('hello world');
    expect(output.bytesSeen).toBe(11);
    expect(output.isTruncated).toBe(false);
  });

  it('keeps the first bytes up to the cap and counts the rest', () => {
    const output = new BoundedOutputBuffer(4);
    output.append(Buffer.from('hel'));
    output.append(Buffer.from('lo'));
    output.append(Buffer.from('!!!'));
    expect(output.text).toBe('hell');
    expect(output.bytesSeen).toBe(8);
    expect(output.isTruncated).toBe(true);
  });

  it('is exactly full, not truncated, at the cap', () => {
    const output = new BoundedOutputBuffer(5);
    output.append(Buffer.from('hello'));
    expect(output.isTruncated).toBe(false);
    output.append(Buffer.alloc(0));
    expect(output.isTruncated).toBe(false);
  });

  it('decodes at read time, so a character split across chunks stays whole', () => {
    const output = new BoundedOutputBuffer();
    const bytes = Buffer.from('é€');
    output.append(bytes.subarray(0, 1));
    output.append(bytes.subarray(1, 3));
    output.append(bytes.subarray(3));
    expect(output.text).toBe('é€');
  });

  it('turns invalid UTF-8 and a character cut by the cap into U+FFFD', () => {
    const invalid = new BoundedOutputBuffer();
    invalid.append(Uint8Array.from([0x61, 0xff, 0x62]));
    expect(invalid.text).toBe('a\uFFFDb');
    const cut = new BoundedOutputBuffer(2);
    cut.append(Buffer.from('a€'));
    expect(cut.text).toBe('a\uFFFD');
  });

  it('reflects appends made after a read', () => {
    const output = new BoundedOutputBuffer();
    output.append(Buffer.from('one'));
    expect(output.text).toBe('one');
    output.append(Buffer.from(' two'));
    expect(output.text).toBe('one two');
  });

  it('copies chunks, so a reused buffer does not change what was kept', () => {
    const output = new BoundedOutputBuffer();
    const chunk = Buffer.from('abc');
    output.append(chunk);
    chunk.write('xyz');
    expect(output.text).toBe('abc');
  });

  it('keeps 64 KiB by default and rejects a bad capacity', () => {
    expect(new BoundedOutputBuffer().capacityBytes).toBe(64 * 1024);
    expect(defaultBoundedOutputBytes).toBe(65_536);
    expect(() => new BoundedOutputBuffer(-1)).toThrow(RangeError);
    expect(() => new BoundedOutputBuffer(1.5)).toThrow(RangeError);
  });
});
