import { describe, expect, it } from 'vitest';
import { HostOutput, type OutputChunk } from './host-output.js';

function collect(limit: number): { output: HostOutput; chunks: OutputChunk[] } {
  const chunks: OutputChunk[] = [];
  return { output: new HostOutput(limit, (chunk) => chunks.push(chunk)), chunks };
}

describe('HostOutput', () => {
  it('sends output under the limit whole, in order', () => {
    const { output, chunks } = collect(1_000);
    output.write('first\n');
    output.write('second\n');
    output.finish();
    expect(chunks).toEqual([{ text: 'first\nsecond\n' }]);
  });

  it('keeps the head and the exact tail of 500,000 lines, and counts every byte cut between them', () => {
    const { output, chunks } = collect(1_000_000);
    const lines: string[] = [];
    for (let index = 0; index < 500_000; index += 1) {
      const line = `line ${index}\n`;
      lines.push(line);
      output.write(line);
    }
    const written = lines.join('');
    output.finish();
    const head = chunks
      .filter((chunk) => chunk.skippedBytes === undefined)
      .map((chunk) => chunk.text)
      .join('');
    const tail = chunks.at(-1) as OutputChunk;
    expect(tail.skippedBytes).toBeGreaterThan(0);
    expect(Buffer.byteLength(head)).toBeLessThanOrEqual(500_000);
    expect(Buffer.byteLength(tail.text)).toBeLessThanOrEqual(500_000);
    expect(Buffer.byteLength(tail.text)).toBeGreaterThan(490_000);
    expect(written.startsWith(head)).toBe(true);
    expect(written.endsWith(tail.text)).toBe(true);
    expect(Buffer.byteLength(head) + (tail.skippedBytes as number) + Buffer.byteLength(tail.text)).toBe(
      Buffer.byteLength(written),
    );
  });

  it('cuts a single write larger than the tail to its last bytes, never inside a character', () => {
    const { output, chunks } = collect(100);
    output.write('a'.repeat(40));
    output.write('é'.repeat(100));
    output.write('end');
    output.finish();
    // The head takes what fits of the second write: 10 bytes, five characters.
    expect(chunks[0]).toEqual({ text: `${'a'.repeat(40)}${'é'.repeat(5)}` });
    const tail = chunks.at(-1) as OutputChunk;
    expect(tail.text).toMatch(/^é+end$/);
    expect(Buffer.byteLength(tail.text)).toBeLessThanOrEqual(50);
    expect(50 + (tail.skippedBytes as number) + Buffer.byteLength(tail.text)).toBe(40 + 200 + 3);
  });

  it('ends the head with what fits of a large write, at its last line break', () => {
    const { output, chunks } = collect(40);
    const text = 'one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n';
    output.write(text);
    output.finish();
    expect(chunks[0]).toEqual({ text: 'one\ntwo\nthree\nfour\n' });
    const tail = chunks.at(-1) as OutputChunk;
    expect(tail.text).toBe(text.slice(-20));
    expect(19 + (tail.skippedBytes as number) + 20).toBe(text.length);
  });

  it('counts a character in the head by its UTF-8 bytes, never splitting it', () => {
    const { output, chunks } = collect(10);
    output.write('ééééé🎉');
    output.finish();
    expect(chunks[0]).toEqual({ text: 'éé' });
  });
});
